/**
 * Resume after a crash with the registry's real steps (`lib/sweeps/<step>.ts` through `sweepStepHandlers`): the
 * runtime running a sweep is killed (SIGKILL) after some shards finished; a new runtime on the same data folder starts
 * the same sweep id again (`POST /v1/sweeps`, as `flywheel sweep start` does), the execution resumes under the same
 * name, and every result counts each attempt once: one row per checkpoint × suite × mode, n = the suite's tasks.
 * And a sweep whose execution failed: started again it runs again, keeping the shards it had finished (no job), as a
 * continuation execution does on AWS when Step Functions can no longer redrive it.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalJobs } from '../../lib/drivers/local/local-jobs.ts';
import { LocalWorkflows } from '../../lib/drivers/local/local-workflows.ts';
import { ValidationError } from '../../lib/errors.ts';
import { openSweepFixture, type SweepFixture } from '../sweeps/support/sweep-fixture.ts';
import { openRegistrySweepRuntime } from './support/registry-sweep-runner.ts';

const RUNNER = fileURLToPath(new URL('./support/registry-sweep-runner.ts', import.meta.url));
let fx: SweepFixture | undefined;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  fx?.close();
});

describe('resume with the registry steps', () => {
  it('a sweep killed mid-run resumes under its name and counts every attempt once', async () => {
    fx = openSweepFixture({ settings: { shardMaxTasks: 2, tasksPerChild: 2 } });
    await fx.seed({ checkpoints: 2, suites: 2, tasks: 4 });
    const body = { sweepId: 'crash-1', modes: ['strict'] };
    const executionId = LocalWorkflows.executionId('sweep', 'crash-1');

    const child = spawn(process.execPath, [RUNNER, fx.dir, JSON.stringify(fx.settings), JSON.stringify(body)], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (chunk: Buffer) => (chunk.toString().includes('started') ? resolve() : undefined));
        child.once('exit', (code) => reject(new Error(`runner exited early (${code})`)));
      });
      // Kill it once two shard jobs have succeeded (of 8: 2 checkpoints × 2 suites × 2 shards), the rest not yet.
      // Scripted pass rates: ck-0 passes t000–t001, ck-1 t000–t002 (rateScript: task number < rate × 10).
      const observer = new LocalJobs({ dataDir: fx.dir, run: false });
      const deadline = Date.now() + 45_000;
      while ((await observer.list({ category: 'evaluation', status: 'SUCCEEDED' })).filter((j) => j.arraySize).length < 2) {
        if (Date.now() > deadline) throw new Error('no shard job succeeded');
        await new Promise((r) => setTimeout(r, 25));
      }
      child.kill('SIGKILL');
      await exited;
      const succeededBefore = (await observer.list({ category: 'evaluation', status: 'SUCCEEDED' })).filter((j) => j.arraySize).map((j) => j.name);
      await observer.close();
      expect(succeededBefore.length).toBeLessThan(8);

      const runtime = openRegistrySweepRuntime(fx.dir, fx.settings);
      closers.push(() => runtime.close());
      fx.ports.workflows = runtime.workflows;
      expect((await runtime.workflows.describe(executionId)).status).toBe('RUNNING');
      const again = await fx.request('POST', '/v1/sweeps', { body });
      expect(again.status).toBe(202);
      expect(again.json.executionId).toBe(executionId);
      const done = await runtime.workflows.waitFor(executionId, { timeoutMs: 90_000 });
      expect(done).toMatchObject({ status: 'SUCCEEDED', output: { sweepId: 'crash-1', status: 'succeeded', succeededShards: 8, failedShards: 0 } });
      expect(runtime.workflows.runs(executionId)).toBe(2);

      const report = (await fx.request('GET', '/v1/sweeps/crash-1')).json;
      expect(report.results.map((r: any) => `${r.checkpoint}/${r.suite}/${r.mode}: ${r.passes}/${r.n} (${r.shardsAggregated} shards)`).sort()).toEqual([
        'ck-0/suite-0/strict: 2/4 (2 shards)',
        'ck-0/suite-1/strict: 2/4 (2 shards)',
        'ck-1/suite-0/strict: 3/4 (2 shards)',
        'ck-1/suite-1/strict: 3/4 (2 shards)',
      ]);
      for (const [suite, checkpoint] of [['suite-0', 'ck-0'], ['suite-1', 'ck-1']] as const) {
        const series = await fx.request('GET', '/v1/results', { query: { suite, checkpoint, mode: 'strict' } });
        expect(series.json.items.map((r: any) => [r.sweepId, r.attempts])).toEqual([['crash-1', 4]]);
      }
      // The shards that had finished before the crash were not run again.
      const jobs = await runtime.jobs.list({ category: 'evaluation' });
      for (const name of succeededBefore) expect(jobs.filter((j) => j.name === name && j.arraySize), name).toHaveLength(1);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }, 150_000);

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
