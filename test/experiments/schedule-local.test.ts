/**
 * Experiments inside the local runtime (`startLocalExperiments` over the real local drivers): the event-log tail hands
 * `experiment.proposed` to the proposal consumer (a draft appears) and `failure-modes.labelled` to the failure-mode
 * metrics (rows in the raw archive), keeping its cursor across a restart so nothing is handled twice; one schedule
 * tick runs for every tenant; the stage's schedule expression parses and fires within its quarter hour.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { getStageSettings } from '../../lib/config/stages.ts';
import { findExperiment, listChanges } from '../../lib/experiments/experiment-store.ts';
import { startLocalExperiments, type LocalExperiments } from '../../lib/experiments/local/local-experiments.ts';
import { archiveKeys } from '../../lib/experiments/record-keys.ts';
import { FAILURE_MODES_LABELLED } from '../../lib/modes/classify-signal.ts';
import { nextScheduledTime } from '../../lib/shared/cron-schedule.ts';
import { EXPERIMENT_PROPOSED } from '../../lib/training/runs/events.ts';
import { feedbackEvent } from '../support/feedback-event.ts';
import { openHarness, type Harness } from '../support/lambda-events.ts';
import { checkpointBody } from './decisions-support.ts';

let h: Harness | undefined;
let experiments: LocalExperiments | undefined;
afterEach(async () => {
  await experiments?.close();
  experiments = undefined;
  h?.close();
  h = undefined;
});

const silent = async () => undefined;

describe('experiments in the local runtime', () => {
  it('drafts a proposed experiment and archives failure modes from the event log, once, across a restart', async () => {
    h = openHarness();
    for (const c of ['ckpt-old', 'ckpt-new']) expect((await h.request('POST', '/v1/checkpoints', { body: checkpointBody(c) })).status).toBeLessThan(300);
    expect((await h.request('POST', '/v1/feedback', { body: feedbackEvent({ eventId: 'fb-1', rating: 'down' }) })).status).toBe(202);
    await h.drain();

    experiments = startLocalExperiments(h.ports, { schedule: false, notify: silent });
    await h.ports.events.publish([
      { type: EXPERIMENT_PROPOSED, id: 'experiment.proposed:run-9', detail: { runId: 'run-9', proposalId: 'exp-run-9', checkpointId: 'ckpt-new', incumbents: ['ckpt-old'], sweepId: 'sw-9', evidence: [] } },
      { type: FAILURE_MODES_LABELLED, id: 'fml-1', detail: { signalKey: 'feedback:fb-1', kind: 'feedback', id: 'fb-1', modes: ['wrong-tool'], inReview: false, labelledAt: '2026-12-02T10:00:05.000Z' } },
    ]);
    await experiments.drain();
    const draft = await findExperiment(h.ports.records, 'exp-run-9');
    expect(draft?.status).toBe('draft');
    expect(draft?.definition.arms.map((a) => a.checkpoint)).toEqual(['ckpt-old', 'ckpt-new']);
    const key = archiveKeys.derivedMetrics('default', '2026-12-02', 'failure-modes:feedback:fb-1');
    const rows = Buffer.from((await h.ports.blobs.get(key))!).toString('utf8').trim().split('\n').map((l) => JSON.parse(l) as { metric: string; user_id: string });
    expect(rows.map((r) => [r.metric, r.user_id])).toEqual([['failure_mode.wrong-tool', 'user-42']]);

    // A restart reads on from its cursor: nothing is drafted or written twice.
    await experiments.close();
    experiments = startLocalExperiments(h.ports, { schedule: false, notify: silent });
    await experiments.drain();
    expect((await listChanges(h.ports.records, 'exp-run-9')).map((c) => c.change)).toEqual(['created']);
  });

  it('one tick runs the schedule for every tenant; the stage expression fires every quarter hour', async () => {
    h = openHarness();
    experiments = startLocalExperiments(h.ports, { schedule: false, notify: silent });
    const runs = await experiments.tick();
    expect(runs.map((r) => r.tenant)).toEqual(['default']);
    const schedule = getStageSettings('local').experiments.schedule;
    const next = nextScheduledTime(schedule, new Date('2026-12-04T10:07:00Z'), 'experiments.schedule.expression');
    expect(next.toISOString()).toBe('2026-12-04T10:15:00.000Z');
  });
});
