/**
 * Decisions over HTTP (the dispatcher over the real local drivers): an experiment created and started through its
 * routes, decided on its newest stored analysis. Ship makes the arm's checkpoint the incumbent (`GET /v1/incumbent`),
 * publishes `experiment.decided` and posts one Slack notice (a stand-in webhook); a retry changes nothing; rollback
 * keeps the incumbent; extend adds days and keeps (or puts back) the experiment running; bad input names the field; a
 * decision that died half-way is finished by its retry, once.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { analysisRecord } from '../../lib/experiments/analysis/analysis-record.ts';
import { planExperimentAction } from '../../lib/experiments/decisions/plan-experiment-action.ts';
import { listChanges, updateExperiment } from '../../lib/experiments/experiment-store.ts';
import { decideExperiment } from '../../lib/experiments/decisions/decide-experiment.ts';
import { getIncumbent, listIncumbentHistory, setIncumbent } from '../../lib/registry/incumbent.ts';
import { openHarness, type Harness } from '../support/lambda-events.ts';
import { analysisOf, checkpointBody, comparison, fakeSlack, metricAnalysis } from './decisions-support.ts';

let slack: Awaited<ReturnType<typeof fakeSlack>>;
let h: Harness | undefined;
beforeAll(async () => {
  slack = await fakeSlack();
  vi.stubEnv('FLYWHEEL_SLACK_WEBHOOK_URL', slack.url);
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await slack.close();
});
afterEach(() => {
  h?.close();
  h = undefined;
});

async function runningWithAnalysis(harness: Harness, id: string, analysed = true) {
  for (const c of ['ckpt-a', 'ckpt-b']) expect((await harness.request('POST', '/v1/checkpoints', { body: checkpointBody(c) })).status).toBeLessThan(300);
  const created = await harness.request('POST', '/v1/experiments', {
    body: { id, name: 'b vs a', arms: [{ id: 'control', checkpoint: 'ckpt-a', control: true }, { id: 'treatment', checkpoint: 'ckpt-b' }], metrics: { primary: 'accepted' }, plannedUnitsPerArm: 500, maxDurationDays: 14 },
  });
  expect(created.status).toBe(201);
  expect((await harness.request('POST', `/v1/experiments/${id}/start`, { body: {} })).status).toBe(200);
  if (!analysed) return undefined;
  const experiment = created.json.experiment;
  const analysis = analysisOf({ ...experiment, startedAt: harness.clock.now.toISOString() }, [
    metricAnalysis('accepted', 'primary', 'increase', [comparison('treatment', { relativeLift: 0.08, ci: { low: 0.03, high: 0.13 }, verdict: 'better', rule: 'fixed-horizon 95%' })]),
  ], {}, new Date(harness.clock.now.getTime() + 3600_000).toISOString());
  analysis.experimentId = id;
  await harness.ports.records.put(analysisRecord.encode(analysis));
  return analysis;
}

describe('POST /v1/experiments/{id}/decide', () => {
  it('ships: the checkpoint becomes the incumbent, the decision rests on the newest analysis, one event and one notice; a retry changes nothing', async () => {
    h = openHarness();
    const postsBefore = slack.posts.length;
    const analysis = (await runningWithAnalysis(h, 'exp-ship'))!;
    h.clock.now = new Date(h.clock.now.getTime() + 2 * 3600_000);
    const shipped = await h.request('POST', '/v1/experiments/exp-ship/decide', { body: { kind: 'ship', arm: 'treatment', reason: 'accepted +8%' } });
    expect(shipped.status).toBe(200);
    expect(shipped.json.changed).toBe(true);
    expect(shipped.json.experiment.status).toBe('decided');
    expect(shipped.json.decision).toMatchObject({ kind: 'ship', arm: 'treatment', promoted: 'ckpt-b', analysisId: analysis.analysisId, by: 'key:test' });

    const incumbent = await h.request('GET', '/v1/incumbent');
    expect(incumbent.json).toMatchObject({ checkpoint: 'ckpt-b', experimentId: 'exp-ship' });
    const events = h.ports.events.after(0, { types: ['experiment.decided'] });
    expect(events.map((e) => [e.id, e.detail.promoted])).toEqual([['experiment.decided:exp-ship', 'ckpt-b']]);
    expect(slack.posts.slice(postsBefore).map((p) => p.text)).toEqual([':information_source: Experiment exp-ship shipped treatment: ckpt-b is the incumbent']);
    const changes = await listChanges(h.ports.records, 'exp-ship');
    expect(changes.at(-1)).toMatchObject({ change: 'decided', by: 'key:test', detail: { kind: 'ship', promoted: 'ckpt-b', analysisId: analysis.analysisId } });

    const retry = await h.request('POST', '/v1/experiments/exp-ship/decide', { body: { kind: 'ship', arm: 'treatment', reason: 'accepted +8%' } });
    expect(retry.status).toBe(200);
    expect(retry.json.changed).toBe(false);
    expect(slack.posts.length).toBe(postsBefore + 1);
    expect(h.ports.events.after(0, { types: ['experiment.decided'] })).toHaveLength(1);
    const other = await h.request('POST', '/v1/experiments/exp-ship/decide', { body: { kind: 'rollback', reason: 'changed my mind' } });
    expect(other.status).toBe(409);
  });

  it('rolls back: decided, the incumbent stays what it was', async () => {
    h = openHarness();
    await setIncumbent(h.ports.records, { checkpoint: 'ckpt-a', by: 'setup' }, h.clock.now);
    await runningWithAnalysis(h, 'exp-rb');
    const rolled = await h.request('POST', '/v1/experiments/exp-rb/decide', { body: { kind: 'rollback', reason: 'latency worse' } });
    expect(rolled.status).toBe(200);
    expect(rolled.json.experiment.status).toBe('decided');
    expect(rolled.json.decision).toMatchObject({ kind: 'rollback', arm: 'control' });
    expect(rolled.json.decision.promoted).toBeUndefined();
    expect((await getIncumbent(h.ports.records))?.checkpoint).toBe('ckpt-a');
  });

  it('extends: more days, still running, recorded with the analysis; one the clock stopped runs again, one a person stopped does not', async () => {
    h = openHarness();
    const analysis = (await runningWithAnalysis(h, 'exp-ext'))!;
    const extended = await h.request('POST', '/v1/experiments/exp-ext/decide', { body: { kind: 'extend', extendDays: 7, reason: 'needs more units' } });
    expect(extended.status).toBe(200);
    expect(extended.json.experiment.status).toBe('running');
    expect(extended.json.experiment.definition.maxDurationDays).toBe(21);
    expect((await listChanges(h.ports.records, 'exp-ext')).at(-1)).toMatchObject({ change: 'extended', detail: { extendDays: 7, maxDurationDays: 21, analysisId: analysis.analysisId } });

    // The schedule stops it at its maximum duration (as planExperimentAction words it): extend runs it again.
    const [stop] = planExperimentAction(extended.json.experiment, analysis, new Date(Date.parse(extended.json.experiment.startedAt) + 21 * 24 * 3600_000));
    expect(stop?.kind).toBe('stop');
    await updateExperiment(h.ports.records, 'exp-ext', (e) => ({ ...e, status: 'stopped', stoppedAt: h!.clock.now.toISOString(), stopReason: (stop as { reason: string }).reason }), { change: 'stopped', by: 'schedule', detail: {} }, h.clock.now);
    const again = await h.request('POST', '/v1/experiments/exp-ext/decide', { body: { kind: 'extend', extendDays: 3, reason: 'resume' } });
    expect(again.status).toBe(200);
    expect(again.json.experiment).toMatchObject({ status: 'running', definition: { maxDurationDays: 24 } });
    expect(again.json.experiment.stopReason).toBeUndefined();

    // One a person stopped stays stopped.
    expect((await h.request('POST', '/v1/experiments/exp-ext/stop', { body: { reason: 'paused' } })).status).toBe(200);
    expect((await h.request('POST', '/v1/experiments/exp-ext/decide', { body: { kind: 'extend', extendDays: 3, reason: 'resume' } })).status).toBe(409);
  });

  it('refuses what cannot be decided, naming the field: no analysis (409), a draft (409), unknown or control arm, missing fields, unknown experiment (404)', async () => {
    h = openHarness();
    await runningWithAnalysis(h, 'exp-new', false);
    expect((await h.request('POST', '/v1/experiments/exp-new/decide', { body: { kind: 'rollback', reason: 'x' } })).status).toBe(409);
    const missing = await h.request('POST', '/v1/experiments/exp-new/decide', { body: { kind: 'ship', reason: '' } });
    expect(missing.status).toBe(400);
    expect(missing.json.issues.map((i: { path: string }) => i.path).sort()).toEqual(['arm', 'reason']);
    const noDays = await h.request('POST', '/v1/experiments/exp-new/decide', { body: { kind: 'extend', reason: 'x', extra: 1 } });
    expect(noDays.status).toBe(400);
    expect(noDays.json.issues.map((i: { path: string }) => i.path).sort()).toEqual(['extendDays', 'extra']);
    const draft = await h.request('POST', '/v1/experiments', {
      body: { id: 'exp-draft', name: 'draft', arms: [{ id: 'control', checkpoint: 'ckpt-a', control: true }, { id: 'treatment', checkpoint: 'ckpt-b' }], metrics: { primary: 'accepted' }, plannedUnitsPerArm: 500 },
    });
    expect(draft.status).toBe(201);
    expect((await h.request('POST', '/v1/experiments/exp-draft/decide', { body: { kind: 'rollback', reason: 'x' } })).status).toBe(409);

    await runningWithAnalysis(h, 'exp-arms');
    for (const [arm, status] of [['nope', 400], ['control', 400]] as const) {
      const r = await h.request('POST', '/v1/experiments/exp-arms/decide', { body: { kind: 'ship', arm, reason: 'x' } });
      expect(r.status).toBe(status);
      expect(r.json.issues.map((i: { path: string }) => i.path)).toEqual(['arm']);
    }
    expect((await h.request('POST', '/v1/experiments/exp-none/decide', { body: { kind: 'rollback', reason: 'x' } })).status).toBe(404);
    expect((await h.request('POST', '/v1/experiments/exp-arms/decide', { body: { kind: 'extend', extendDays: 400, reason: 'x' } })).status).toBe(400);
  });

  it('a decision whose notice died half-way is finished by its retry, once; a retry never takes back a later incumbent', async () => {
    h = openHarness();
    await runningWithAnalysis(h, 'exp-crash');
    const told: string[] = [];
    let die = true;
    const notify = async (n: { id?: string }) => {
      if (die) {
        die = false;
        throw new Error('the process died here');
      }
      told.push(n.id!);
    };
    const ports = { ...h.ports, notify };
    const ship = { kind: 'ship', arm: 'treatment', reason: 'better' };
    await expect(decideExperiment(ports, 'exp-crash', ship, 'ana')).rejects.toThrow('the process died here');
    const retry = await decideExperiment(ports, 'exp-crash', ship, 'ana');
    expect(retry.changed).toBe(false);
    await decideExperiment(ports, 'exp-crash', ship, 'ana');
    expect(told).toEqual(['experiment.decided:exp-crash']);
    expect((await listIncumbentHistory(h.ports.records)).map((x) => x.checkpoint)).toEqual(['ckpt-b']);

    // Another experiment ships ckpt-a later; an old retry of exp-crash leaves it the incumbent.
    await setIncumbent(h.ports.records, { checkpoint: 'ckpt-a', experimentId: 'exp-later', by: 'bo' }, new Date(h.clock.now.getTime() + 3600_000));
    await decideExperiment(ports, 'exp-crash', ship, 'ana');
    expect((await getIncumbent(h.ports.records))?.checkpoint).toBe('ckpt-a');
  });
});
