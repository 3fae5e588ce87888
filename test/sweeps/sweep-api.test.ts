/**
 * `POST /v1/sweeps` → the workflows port (the local driver running the very sweep definition the CDK app renders)
 * → the step handlers → shard array jobs as child processes of the local jobs driver (a scripted rollout job) →
 * `GET /v1/sweeps/{id}` and `GET /v1/results`.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalJobs } from '../../lib/drivers/local/local-jobs.ts';
import { LocalWorkflows } from '../../lib/drivers/local/local-workflows.ts';
import { openDatabase } from '../../lib/drivers/local/sqlite-database.ts';
import { sweepStepHandlers } from '../../lib/sweeps/sweep-step-handlers.ts';
import { localSweepWorkflow } from '../../lib/sweeps/local/local-sweep-workflow.ts';
import { SWEEP_WORKFLOW } from '../../lib/sweeps/workflow/sweep.asl.ts';
import { openSweepFixture, type SweepFixture } from './support/sweep-fixture.ts';

let fx: SweepFixture;
let jobs: LocalJobs | undefined;
let workflows: LocalWorkflows | undefined;
afterEach(async () => {
  await workflows?.close();
  await jobs?.close();
  fx?.close();
});

function wire(fixture: SweepFixture, env: Record<string, string> = {}): LocalWorkflows {
  jobs = new LocalJobs({
    dataDir: fixture.dir,
    definitions: { rollout: { command: ['node', 'test/sweeps/support/scripted-rollout-job.ts'] } },
    env: { ...process.env, FLYWHEEL_DATA_DIR: fixture.dir, ...env },
    pollMs: 50,
    maxConcurrency: { gpu: 2 },
  });
  const steps = sweepStepHandlers({ settings: fixture.settings, notify: { log: () => {} } });
  // Real time for the workflow (its clock drives Batch polling); the fixture clock only stamps records.
  workflows = new LocalWorkflows(openDatabase(join(fixture.dir, 'workflows.sqlite')), { [SWEEP_WORKFLOW]: localSweepWorkflow({ steps, ports: fixture.ports, jobs, pollMs: 50 }) }, { retryPauseOverrides: { SubmitShardJob: 0, SubmitShardJobDistributed: 0 } });
  fixture.ports.workflows = workflows;
  return workflows;
}

describe('POST /v1/sweeps and GET /v1/sweeps/{id}', () => {
  it('starts a sweep through the workflows port and reports score per checkpoint × suite × mode with CIs', async () => {
    fx = openSweepFixture({ settings: { shardMaxTasks: 4, tasksPerChild: 2 } });
    await fx.seed({ checkpoints: 2, suites: 1, tasks: 4 });
    // Tasks t000–t003 pass when t < rate × 10: 2 and 3 of 4.
    const wf = wire(fx, { FLYWHEEL_SCRIPTED_RATES: JSON.stringify({ 'ck-0': 0.2, 'ck-1': 0.3 }) });

    const bad = await fx.request('POST', '/v1/sweeps', { body: { suites: ['nope'], modes: ['strict'] } });
    expect(bad.status).toBe(400);
    expect(bad.json.issues).toEqual([{ path: 'suites[0]', message: 'no suite nope is registered' }]);

    const started = await fx.request('POST', '/v1/sweeps', { body: { sweepId: 'api-1', suites: ['suite-0'], modes: ['strict'] } });
    expect(started.status).toBe(202);
    expect(started.json).toEqual({ sweepId: 'api-1', executionId: LocalWorkflows.executionId('sweep', 'api-1'), checkpoints: ['ck-0', 'ck-1'], suites: ['suite-0'], modes: ['strict'] });
    const done = await wf.waitFor(started.json.executionId, { timeoutMs: 60_000 });
    expect(done.status).toBe('SUCCEEDED');
    expect(done.output).toEqual({ sweepId: 'api-1', status: 'succeeded', succeededShards: 2, failedShards: 0 });

    const report = await fx.request('GET', '/v1/sweeps/api-1');
    expect(report.status).toBe(200);
    expect(report.json.sweep).toMatchObject({ sweepId: 'api-1', status: 'succeeded', shardCount: 2, succeededShards: 2 });
    expect(report.json.execution).toMatchObject({ status: 'SUCCEEDED' });
    expect(report.json.results.map((r: any) => [r.checkpoint, r.mode, r.score, r.n])).toEqual([
      ['ck-0', 'strict', 0.5, 4],
      ['ck-1', 'strict', 0.75, 4],
    ]);
    for (const r of report.json.results) {
      expect(r.ci.low).toBeLessThanOrEqual(r.score);
      expect(r.ci.high).toBeGreaterThanOrEqual(r.score);
    }

    // Starting the same id again resumes (returns) that execution, and counts nothing twice.
    const again = await fx.request('POST', '/v1/sweeps', { body: { sweepId: 'api-1', suites: ['suite-0'], modes: ['strict'] } });
    expect(again.status).toBe(202);
    expect(again.json.executionId).toBe(started.json.executionId);
    const series = await fx.request('GET', '/v1/results', { query: { suite: 'suite-0', checkpoint: 'ck-1', mode: 'strict' } });
    expect(series.json.items.map((r: any) => [r.sweepId, r.passes, r.attempts])).toEqual([['api-1', 3, 4]]);
    expect((await fx.request('GET', '/v1/sweeps/unknown')).status).toBe(404);
  });

  it('a sweep not validated yet, or refused by validation, is reported as requested with its execution', async () => {
    fx = openSweepFixture({ settings: { shardMaxTasks: 4, tasksPerChild: 2 } });
    await fx.seed({ checkpoints: 1, suites: 1, tasks: 2 });
    // A workflows port whose execution never gets to validate-sweep, then ends refused by it.
    let ended = false;
    fx.ports.workflows = {
      start: async (_workflow, { name }) => ({ executionId: `exec:${name}` }),
      describe: async (executionId) => ({
        executionId,
        workflow: 'sweep',
        name: 'early-1',
        input: {},
        startedAt: 0,
        status: ended ? 'FAILED' : 'RUNNING',
        ...(ended ? { error: 'Flywheel.ValidationError', cause: 'suite suite-0 was retired' } : {}),
      }),
      stop: async () => undefined,
    };
    const started = await fx.request('POST', '/v1/sweeps', { body: { sweepId: 'early-1', suites: ['suite-0'], modes: ['strict'] } });
    expect(started.status).toBe(202);
    const early = await fx.request('GET', '/v1/sweeps/early-1');
    expect(early.status).toBe(200);
    expect(early.json.sweep).toMatchObject({ sweepId: 'early-1', status: 'requested', trigger: 'manual', checkpoints: ['ck-0'], suites: [{ id: 'suite-0' }], modes: ['strict'] });
    expect(early.json.execution).toEqual({ executionId: 'exec:early-1', status: 'RUNNING' });
    expect(early.json.results).toEqual([]);
    ended = true;
    const refused = await fx.request('GET', '/v1/sweeps/early-1');
    expect(refused.json.execution).toEqual({ executionId: 'exec:early-1', status: 'FAILED', error: 'Flywheel.ValidationError', cause: 'suite suite-0 was retired' });
  });

  it('a failing shard is caught in its iteration and reported; started again by hand, only that shard is retried', async () => {
    fx = openSweepFixture({ settings: { shardMaxTasks: 2, tasksPerChild: 2 } });
    await fx.seed({ checkpoints: 1, suites: 1, tasks: 4 });
    writeFileSync(join(fx.dir, 'scripted-fail-shards'), 'c0-s0-strict-1');
    const wf = wire(fx, { FLYWHEEL_SCRIPTED_RATES: JSON.stringify({ 'ck-0': 0.3 }) });
    const started = await fx.request('POST', '/v1/sweeps', { body: { sweepId: 'api-2', modes: ['strict'] } });
    const done = await wf.waitFor(started.json.executionId, { timeoutMs: 60_000 });
    expect(done.status).toBe('SUCCEEDED');
    const report = (await fx.request('GET', '/v1/sweeps/api-2')).json;
    expect(report.sweep.status).toBe('partial');
    expect(report.failedShards).toEqual([expect.objectContaining({ shardId: 'c0-s0-strict-1', checkpoint: 'ck-0', suite: 'suite-0', mode: 'strict' })]);
    expect(report.results[0]).toMatchObject({ tasks: 4, n: 2, shardsAggregated: 1, shardsFailed: 1 });
    const shardJobs = async () => (await jobs!.list({ category: 'evaluation' })).filter((j) => j.arraySize);
    expect((await shardJobs()).map((j) => j.name).sort()).toEqual(['api-2-c0-s0-strict-0', 'api-2-c0-s0-strict-1', 'api-2-c0-s0-strict-1']);

    // The fault is gone; the person who read the alert starts the sweep again.
    rmSync(join(fx.dir, 'scripted-fail-shards'));
    const again = await fx.request('POST', '/v1/sweeps', { body: { sweepId: 'api-2', modes: ['strict'] } });
    expect(again.status).toBe(202);
    expect(again.json.executionId).toBe(started.json.executionId);
    const retried = await wf.waitFor(again.json.executionId, { timeoutMs: 60_000 });
    expect(retried.output).toEqual({ sweepId: 'api-2', status: 'succeeded', succeededShards: 2, failedShards: 0 });
    const after = (await fx.request('GET', '/v1/sweeps/api-2')).json;
    expect(after.sweep.status).toBe('succeeded');
    expect(after.failedShards).toEqual([]);
    // t000–t002 pass at rate 0.3: 3 of 4, each attempt once.
    expect(after.results[0]).toMatchObject({ tasks: 4, n: 4, passes: 3, shardsAggregated: 2, shardsFailed: 0 });
    // One new job, for the shard that had failed; the finished shard was kept.
    const names = (await shardJobs()).map((j) => j.name).sort();
    expect(names).toEqual(['api-2-c0-s0-strict-0', 'api-2-c0-s0-strict-1', 'api-2-c0-s0-strict-1', 'api-2-c0-s0-strict-1']);
    // Finished now: a further start returns it and runs nothing.
    await fx.request('POST', '/v1/sweeps', { body: { sweepId: 'api-2', modes: ['strict'] } });
    expect(wf.runs(started.json.executionId)).toBe(2);
    const finished = fx.events.filter((e) => e.type === 'sweep.finished').map((e) => (e.detail as { status: string }).status);
    expect(finished).toEqual(['partial', 'succeeded']);
  });
});

describe('starting a sweep twice before it is validated', () => {
  it('reuses the first input, so the workflows port returns the same execution instead of refusing a new input', async () => {
    fx = openSweepFixture();
    await fx.seed({ checkpoints: 1, suites: 1, tasks: 2 });
    // A workflow that never reaches validate-sweep: the sweep record does not exist when the second start comes.
    workflows = new LocalWorkflows(openDatabase(join(fx.dir, 'workflows.sqlite')), {
      [SWEEP_WORKFLOW]: { definition: { StartAt: 'Hold', States: { Hold: { Type: 'Pass', End: true } } }, lambdas: {} },
    });
    fx.ports.workflows = workflows;
    const first = await fx.request('POST', '/v1/sweeps', { body: { sweepId: 'twice' } });
    fx.tick(60_000);
    const second = await fx.request('POST', '/v1/sweeps', { body: { sweepId: 'twice' } });
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    expect(second.json.executionId).toBe(first.json.executionId);
    const done = await workflows.waitFor(first.json.executionId);
    expect(done.input).toMatchObject({ sweepId: 'twice', trigger: 'manual', checkpoints: ['ck-0'], suites: ['suite-0'], requestedAt: '2026-12-02T10:00:01.000Z' });
  });
});
