/**
 * Resume with the registry's real steps (`lib/sweeps/<step>.ts` through `sweepStepHandlers`) of a sweep whose
 * execution failed: started again (`POST /v1/sweeps`, as `flywheel sweep start` does) it runs again, keeping the
 * shards it had finished (no job), as a continuation execution does on AWS when Step Functions can no longer redrive
 * it. The resume after a crash (the runtime killed mid-sweep) runs with the synthesized definition in
 * `synthesized-sweep-local.test.ts`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ValidationError } from '../../lib/errors.ts';
import { openSweepFixture, type SweepFixture } from '../sweeps/support/sweep-fixture.ts';
import { openRegistrySweepRuntime } from './support/registry-sweep-runner.ts';

let fx: SweepFixture | undefined;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  fx?.close();
});

describe('resume with the registry steps', () => {
  it('a sweep whose execution failed resumes when its id is started again, and submits no job for a finished shard', async () => {
    fx = openSweepFixture({ settings: { shardMaxTasks: 2, tasksPerChild: 2 } });
    await fx.seed({ checkpoints: 1, suites: 2, tasks: 4 });
    let compareFails = true;
    const runtime = openRegistrySweepRuntime(fx.dir, fx.settings, (steps) => ({
      ...steps,
      'compare-incumbent': async (ports, input) => {
        if (compareFails) {
          compareFails = false;
          throw new ValidationError('incumbent record unreadable (test)');
        }
        return steps['compare-incumbent'](ports, input);
      },
    }));
    closers.push(() => runtime.close());
    fx.ports.workflows = runtime.workflows;
    const body = { sweepId: 'fail-1', modes: ['strict'] };
    const executionId = (await fx.request('POST', '/v1/sweeps', { body })).json.executionId as string;
    const failed = await runtime.workflows.waitFor(executionId, { timeoutMs: 60_000 });
    expect(failed).toMatchObject({ status: 'FAILED', error: 'Flywheel.ValidationError' });
    const shardJobs = async () => (await runtime.jobs.list({ category: 'evaluation' })).filter((j) => j.arraySize).map((j) => j.name).sort();
    const jobsBefore = await shardJobs();
    expect(jobsBefore).toHaveLength(4); // 1 checkpoint × 2 suites × 2 shards

    const again = await fx.request('POST', '/v1/sweeps', { body });
    expect(again.status).toBe(202);
    expect(again.json.executionId).toBe(executionId);
    const done = await runtime.workflows.waitFor(executionId, { timeoutMs: 60_000 });
    expect(done).toMatchObject({ status: 'SUCCEEDED', output: { sweepId: 'fail-1', status: 'succeeded', succeededShards: 4, failedShards: 0 } });
    expect(runtime.workflows.runs(executionId)).toBe(2);
    const kept = runtime.workflows.history(executionId).filter((e) => e.type === 'StateEntered' && e.state === 'KeepShardResult');
    expect(kept).toHaveLength(4);
    expect(await shardJobs()).toEqual(jobsBefore);

    // A continuation, as Step Functions gets for a sweep it can no longer redrive: another execution, same input.
    const continuation = await runtime.workflows.start('sweep', { name: 'fail-1-r2', input: failed.input });
    expect(await runtime.workflows.waitFor(continuation.executionId, { timeoutMs: 60_000 })).toMatchObject({ status: 'SUCCEEDED', output: { succeededShards: 4 } });
    expect(await shardJobs()).toEqual(jobsBefore);
    const report = (await fx.request('GET', '/v1/sweeps/fail-1')).json;
    expect(report.results.map((r: any) => `${r.checkpoint}/${r.suite}: ${r.passes}/${r.n}`).sort()).toEqual(['ck-0/suite-0: 2/4', 'ck-0/suite-1: 2/4']);
  }, 120_000);
});
