/**
 * Failures reported once, with their cause and the link to act, through the migrated callers: a sweep that lost a
 * shard (driven twice: the replay folds into the first notice, Slack hears once), a saturated suite (a decision with a
 * retire button), and the sweep's heartbeats (its watch started by the plan, ended by the notify step).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { getNotice, listNotices } from '../../lib/people/notices/notice-store.ts';
import { heartbeatKeys } from '../../lib/people/notices/record-keys.ts';
import { retireSuite } from '../../lib/registry/retire-suite.ts';
import { sweepStepHandlers } from '../../lib/sweeps/sweep-step-handlers.ts';
import { driveSweep } from '../sweeps/support/drive-sweep.ts';
import { rateScript } from '../sweeps/support/scripted-rollout.ts';
import { openSweepFixture, type SweepFixture } from '../sweeps/support/sweep-fixture.ts';
import { startWebhookRecorder, type WebhookRecorder } from './support/notices-webhook.ts';

let fx: SweepFixture;
let slack: WebhookRecorder;
beforeAll(async () => {
  slack = await startWebhookRecorder();
});
afterAll(async () => {
  await slack.close();
});
afterEach(() => fx?.close());

describe('failures once, with cause and link', () => {
  it('a sweep that lost a shard is one failure notice with the shard and its error, however often it is replayed', async () => {
    fx = openSweepFixture({ settings: { shardMaxTasks: 10 } });
    await fx.seed({ checkpoints: 1, suites: 1, tasks: 20 });
    const lines: string[] = [];
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { webhookUrl: slack.url, log: (l) => lines.push(l) } });
    const input = { sweepId: 'p1', trigger: 'manual' as const, requestedAt: fx.clock.now.toISOString(), modes: ['strict' as const] };
    const failShard = (shard: { shardId: string }) => shard.shardId.endsWith('-1');
    const first = await driveSweep(steps, fx.ports, input, { script: rateScript(() => 0.5), failShard });
    expect(first.notice).toMatchObject({ status: 'partial', failedShards: 1 });
    await driveSweep(steps, fx.ports, input, { script: rateScript(() => 0.5), failShard });

    const { notices } = await listNotices(fx.ports.records, { kind: 'failure' });
    expect(notices).toHaveLength(1);
    const [notice] = notices;
    expect(notice).toMatchObject({
      dedupKey: 'sweep.finished:p1:1-1',
      severity: 'warning',
      title: 'Sweep p1 partial: 1/2 shards',
      link: '/attempts?sweep=p1',
      source: { capability: 'sweeps', runKind: 'sweep', runId: 'p1' },
      occurrences: 2,
      delivery: { slack: 'sent', topic: 'sent' },
    });
    expect(notice!.text).toMatch(/Failed shards: \S+-1 \(States\.TaskFailed\)/);
    const posted = slack.bodies.filter((b) => String(b.text).includes('Sweep p1 partial'));
    expect(posted).toHaveLength(1);
    expect(JSON.stringify(posted[0]!.blocks)).toContain('States.TaskFailed');
    expect(lines.filter((l) => (JSON.parse(l) as { message: string; title?: string }).title === 'Sweep p1 partial: 1/2 shards')).toHaveLength(1);

    // The sweep's watch: started by the plan, beaten per shard, ended by notify.
    expect((await fx.ports.records.query({ index: 'gsi1', partition: heartbeatKeys.all })).items).toEqual([]);
  });

  it('a saturated suite asks for a decision: one notice with a retire button, linked to the suite', async () => {
    fx = openSweepFixture();
    await fx.seed({ checkpoints: 1, suites: 1, tasks: 20 });
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    const input = { sweepId: 's1', trigger: 'manual' as const, requestedAt: fx.clock.now.toISOString(), modes: ['strict' as const] };
    await driveSweep(steps, fx.ports, input, { script: rateScript(() => 1) });
    const { notices } = await listNotices(fx.ports.records, { kind: 'decision', status: 'open' });
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({
      dedupKey: 'suite.saturated:suite-0:v1',
      link: '/suites/suite-0',
      actions: [{ id: 'retire', style: 'danger', operation: { kind: 'retire-suite', suiteId: 'suite-0' } }],
    });
    expect(notices[0]!.text).toContain('Proposed: retire it');

    // Retired by its own route (not the button): the notice that asked has its answer.
    await retireSuite(fx.ports, 'suite-0', { reason: 'saturated', by: 'evals' });
    const answered = await getNotice(fx.ports.records, notices[0]!.noticeId);
    expect(answered).toMatchObject({ status: 'resolved', resolution: { by: 'evals', outcome: 'Retired: saturated' } });
  });
});
