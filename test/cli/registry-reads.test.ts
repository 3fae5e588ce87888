/**
 * The API the CLI reads, through the dispatcher over local ports: `GET /v1/checkpoints/{id}`, the sweep a checkpoint
 * registration names (`sweeps` of `POST /v1/checkpoints`, the id the `checkpoint.registered` trigger gives it), and
 * each shard's progress (`GET /v1/sweeps/{id}/shards`) before, during and after its attempts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { registeredCheckpointSweepId } from '../../lib/registry/register-checkpoint.ts';
import { sweepStepHandlers } from '../../lib/sweeps/sweep-step-handlers.ts';
import { checkpointSweepId } from '../../lib/sweeps/workflow/start-sweep-from-trigger.ts';
import { driveSweep } from '../sweeps/support/drive-sweep.ts';
import { rateScript, runScriptedShard } from '../sweeps/support/scripted-rollout.ts';
import { openSweepFixture, type SweepFixture } from '../sweeps/support/sweep-fixture.ts';

let fx: SweepFixture;
afterEach(() => fx?.close());

const serving = { kind: 'endpoint', model: 'openai:coder@http://127.0.0.1:9/v1' };

describe('GET /v1/checkpoints/{id} and the sweep a registration names', () => {
  it('answers one checkpoint (ids with : and /), 404 for an unknown one, 400 naming a malformed id', async () => {
    fx = openSweepFixture();
    const id = 'org/coder-7b:step-100';
    expect((await fx.request('POST', '/v1/checkpoints', { body: { id, model: 'coder-7b', serving, sweep: false, metadata: { lr: 0.1 } } })).status).toBe(201);
    const got = await fx.request('GET', `/v1/checkpoints/${encodeURIComponent(id)}`);
    expect(got).toEqual({ status: 200, json: { id, model: 'coder-7b', serving, status: 'active', metadata: { lr: 0.1 }, registeredAt: '2026-12-02T10:00:00.000Z' } });
    const missing = await fx.request('GET', '/v1/checkpoints/nope');
    expect(missing.status).toBe(404);
    expect(missing.json.message).toBe('No checkpoint nope');
    const bad = await fx.request('GET', `/v1/checkpoints/${encodeURIComponent('has space')}`);
    expect(bad.status).toBe(400);
    expect(bad.json.issues[0].path).toBe('id');
  });

  it('names the sweep the trigger starts: its id and the active suites; none with sweep false or no active suite', async () => {
    fx = openSweepFixture();
    const none = await fx.request('POST', '/v1/checkpoints', { body: { id: 'ck-a', model: 'coder', serving } });
    expect(none.json.sweeps).toEqual([]);
    await fx.seed({ checkpoints: 0, suites: 2, tasks: 3 });
    await fx.request('POST', '/v1/suites/suite-1/retire', { body: { reason: 'old' } });
    const started = await fx.request('POST', '/v1/checkpoints', { body: { id: 'ck-b:step-2', model: 'coder', serving } });
    expect(started.status).toBe(201);
    // The trigger's own id for the checkpoint: a retry names the same sweep.
    expect(registeredCheckpointSweepId('ck-b:step-2')).toBe(checkpointSweepId('ck-b:step-2'));
    expect(started.json.sweeps).toEqual([{ sweepId: checkpointSweepId('ck-b:step-2'), suites: ['suite-0'] }]);
    const retry = await fx.request('POST', '/v1/checkpoints', { body: { id: 'ck-b:step-2', model: 'coder', serving } });
    expect(retry.json).toMatchObject({ created: false, sweeps: started.json.sweeps });
    const quiet = await fx.request('POST', '/v1/checkpoints', { body: { id: 'ck-c', model: 'coder', serving, sweep: false } });
    expect(quiet.json.sweeps).toEqual([]);
  });
});

describe('GET /v1/sweeps/{id}/shards', () => {
  it('reports each shard pending, running with its attempts done of total, then succeeded or failed with the error', async () => {
    fx = openSweepFixture({ settings: { shardMaxTasks: 2, attemptsPerTask: 2 } });
    await fx.seed({ checkpoints: 1, suites: 1, tasks: 3 });
    expect((await fx.request('GET', '/v1/sweeps/nope/shards')).status).toBe(404);
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    const input = { sweepId: 's1', trigger: 'manual' as const, requestedAt: '2026-12-02T11:00:00.000Z', checkpoints: ['ck-0'], modes: ['strict' as const] };
    await steps['validate-sweep'](fx.ports, input);
    const unplanned = await fx.request('GET', '/v1/sweeps/s1/shards');
    expect(unplanned.json).toEqual({ sweepId: 's1', planned: false, shards: [] });
    const plan = await steps['plan-shards'](fx.ports, { sweepId: 's1' });
    expect(plan.shards).toHaveLength(2);
    const pending = await fx.request('GET', '/v1/sweeps/s1/shards');
    expect(pending.json.shards).toEqual([
      { shardId: plan.shards[0]!.shardId, checkpoint: 'ck-0', suite: 'suite-0', mode: 'strict', status: 'pending', done: 0, total: 4, tasks: 2 },
      { shardId: plan.shards[1]!.shardId, checkpoint: 'ck-0', suite: 'suite-0', mode: 'strict', status: 'pending', done: 0, total: 2, tasks: 1 },
    ]);
    // The first shard's attempts are recorded; it is not aggregated yet.
    await runScriptedShard(fx.ports, plan.shards[0]!.shardKey, rateScript(() => 0.5));
    fx.tick(30_000);
    const running = (await fx.request('GET', '/v1/sweeps/s1/shards')).json.shards[0];
    expect(running).toMatchObject({ status: 'running', done: 4, total: 4, startedAt: expect.any(String) });
    expect(running.elapsedSeconds).toBeGreaterThanOrEqual(0);
  });

  it('after the sweep: every shard succeeded, or failed with its reason', async () => {
    fx = openSweepFixture({ settings: { shardMaxTasks: 2, attemptsPerTask: 1 } });
    await fx.seed({ checkpoints: 1, suites: 1, tasks: 3 });
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    const input = { sweepId: 's2', trigger: 'manual' as const, requestedAt: '2026-12-02T11:00:00.000Z', checkpoints: ['ck-0'], modes: ['strict' as const] };
    await driveSweep(steps, fx.ports, input, { script: rateScript(() => 1), failShard: (s) => s.shardId.endsWith('-1') });
    const { shards } = (await fx.request('GET', '/v1/sweeps/s2/shards')).json;
    expect(shards.map((s: { status: string; done: number; total: number }) => [s.status, s.done, s.total])).toEqual([
      ['succeeded', 2, 2],
      ['failed', 0, 1],
    ]);
    expect(shards[1].error).toContain('States.TaskFailed');
  });
});
