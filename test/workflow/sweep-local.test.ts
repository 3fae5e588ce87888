/**
 * The sweep definition run end to end by the local workflows driver, as `npm start` runs it: real SQLite records,
 * file blobs, the local jobs driver running each shard's array job as child processes that talk to a scripted model
 * over HTTP. Covers a failing shard (caught inside its iteration, reported, the others succeed), a retried Batch
 * submission, a refused one (not retried), a resume after a crash of the whole runtime (same execution name: nothing
 * counted twice), and a saturation alert.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { TransientError, ValidationError } from '../../lib/errors.ts';
import type { JobsPort } from '../../lib/ports/jobs.ts';
import { SWEEP_WORKFLOW } from '../../lib/sweeps/workflow/sweep.asl.ts';
import type { SweepExecutionInput } from '../../lib/sweeps/workflow/sweep-steps.ts';
import { reply, startScriptedModelServer, type ScriptedModelServer } from '../support/scripted-model-server.ts';
import { listAll, minimalSweepSteps, putTestSuite, runIdOf } from './support/minimal-sweep-steps.ts';
import { openSweepRuntime, type SweepRuntime } from './support/sweep-runtime.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import { waitFor } from '../support/wait-for.ts';

const RUNNER = fileURLToPath(new URL('./support/sweep-runner.ts', import.meta.url));

/** The runner process ended while the test waited on it: no later check can succeed. */
class RunnerExitedError extends Error {}

/** Passes every task of suite `easy`, `h1` of `hard`, fails the rest; answers 500 to `ckpt-broken`; slow for `ckpt-slow`. */
function modelScript(request: { body: Record<string, unknown> }) {
  const content = String((request.body.messages as Array<{ content: string }>)[0]?.content ?? '');
  const field = (name: string) => new RegExp(`${name}=(\\S+)`).exec(content)?.[1];
  if (field('checkpoint') === 'ckpt-broken') return reply.error(500);
  const pass = field('suite') === 'easy' || field('task') === 'h1';
  return reply.text(pass ? 'pass' : 'fail', field('checkpoint') === 'ckpt-slow' ? { delayMs: 400 } : {});
}

let model: ScriptedModelServer;
const runtimes: SweepRuntime[] = [];

beforeAll(async () => {
  model = await startScriptedModelServer((request) => modelScript(request));
});
afterAll(async () => {
  await model.close();
});
afterEach(async () => {
  for (const r of runtimes.splice(0)) await r.close();
});

const freshDir = tempDirs('flywheel-sweep-');

function open(dataDir: string, wrapJobs?: (jobs: JobsPort) => JobsPort, inlineMapMaxShards?: number): SweepRuntime {
  const runtime = openSweepRuntime({
    dataDir,
    modelUrl: model.baseUrl,
    steps: minimalSweepSteps(),
    ...(wrapJobs ? { wrapJobs } : {}),
    ...(inlineMapMaxShards !== undefined ? { inlineMapMaxShards } : {}),
  });
  runtimes.push(runtime);
  return runtime;
}

function request(sweepId: string, checkpoints: string[], extra: Partial<SweepExecutionInput> = {}): SweepExecutionInput {
  return { sweepId, trigger: 'manual', checkpoints, suites: ['easy', 'hard'], modes: ['strict'], requestedAt: '2026-12-02T20:00:00Z', ...extra };
}

/** The jobs port with another `submit` (methods are bound: the local driver's are class methods). */
function withSubmit(jobs: JobsPort, submit: JobsPort['submit']): JobsPort {
  return {
    ...jobs,
    describe: (id) => jobs.describe(id),
    children: (id) => jobs.children(id),
    logs: (id, o) => jobs.logs(id, o),
    cancel: (id, r) => jobs.cancel(id, r),
    list: (f) => jobs.list(f),
    submit,
  };
}

/** Fails the first submission of the job named `failFirst` as a throttled SubmitJob would. */
function throttleOnce(failFirst: string) {
  const failed = new Set<string>();
  return (jobs: JobsPort): JobsPort =>
    withSubmit(jobs, async (submission) => {
      if (submission.name === failFirst && !failed.has(submission.name)) {
        failed.add(submission.name);
        throw new TransientError('Too Many Requests (SubmitJob rate exceeded)');
      }
      return jobs.submit(submission);
    });
}

/** Refuses every submission as Batch refuses a bad request (not transient: the driver names it Batch.ClientException). */
function refuseSubmissions(jobs: JobsPort): JobsPort {
  return withSubmit(jobs, async () => {
    throw new ValidationError('JobDefinition flywheel-local-rollout does not accept this override', [{ path: 'containerOverrides', message: 'invalid' }]);
  });
}

describe('sweep on the local runtime', () => {
  it('a failing shard is caught and reported, a throttled submission is retried, a saturated suite is flagged', async () => {
    const runtime = open(freshDir(), throttleOnce('s1-c0-s1-strict'));
    await putTestSuite(runtime.ports, 'easy', ['e1', 'e2', 'e3']);
    await putTestSuite(runtime.ports, 'hard', ['h1', 'h2']);
    const { executionId } = await runtime.workflows.start(SWEEP_WORKFLOW, { name: 's1', input: request('s1', ['ckpt-a', 'ckpt-broken']) });
    const done = await runtime.workflows.waitFor(executionId, { timeoutMs: 60_000 });

    expect(done.status).toBe('SUCCEEDED');
    expect(done.output).toEqual({ sweepId: 's1', status: 'partial', succeededShards: 2, failedShards: 2 });

    // The broken checkpoint's shards failed alone: recorded with the Step Functions error, cause kept in a blob.
    const shards = await listAll(runtime.ports, 'SWEEP#s1', 'SHARD#');
    expect(Object.fromEntries(shards.map((s) => [s.sk, s.status]))).toEqual({
      'SHARD#c0-s0-strict': 'succeeded',
      'SHARD#c0-s1-strict': 'succeeded',
      'SHARD#c1-s0-strict': 'failed',
      'SHARD#c1-s1-strict': 'failed',
    });
    expect(shards.filter((s) => s.status === 'failed').map((s) => s.error)).toEqual(['States.TaskFailed', 'States.TaskFailed']);
    const cause = new TextDecoder().decode(await runtime.ports.blobs.get('sweeps/s1/failures/c1-s0-strict.txt'));
    expect(JSON.parse(cause)).toMatchObject({ Status: 'FAILED', ShareIdentifier: 'evaluation', ArrayProperties: { Size: 2 } });

    // Each broken shard's job ran twice (BATCH_JOB_RETRY: one retry), each good shard's once; all under `evaluation`.
    const jobs = await runtime.jobs.list({ category: 'evaluation' });
    const byName = (name: string) => jobs.filter((j) => j.name === name);
    expect(byName('s1-c1-s0-strict').map((j) => j.status)).toEqual(['FAILED', 'FAILED']);
    expect(byName('s1-c0-s0-strict').map((j) => j.status)).toEqual(['SUCCEEDED']);
    expect(byName('s1-c0-s1-strict').map((j) => j.status)).toEqual(['SUCCEEDED']);
    expect(jobs.every((j) => j.pool === 'gpu' && j.arraySize === 2)).toBe(true);

    // The throttled submission was retried by the definition's Retry (Batch.AWSBatchException), not by the driver.
    const history = runtime.workflows.history(executionId);
    const failedSubmits = history.filter((e) => e.type === 'StateFailed' && e.state === 'SubmitShardJob');
    expect(failedSubmits.map((e) => e.error).sort()).toEqual(['Batch.AWSBatchException', 'States.TaskFailed', 'States.TaskFailed', 'States.TaskFailed', 'States.TaskFailed']);
    expect(history.filter((e) => e.type === 'StateRetried' && e.state === 'SubmitShardJob')).toHaveLength(3);

    // Results: scores from the attempts the jobs wrote; the easy suite saturated (best strict 1.0 ≥ 0.9).
    const easy = await listAll(runtime.ports, 'RESULT#easy#strict');
    const hard = await listAll(runtime.ports, 'RESULT#hard#strict');
    expect(easy.map((r) => [r.checkpoint, r.score, r.attempts])).toEqual([['ckpt-a', 1, 3]]);
    expect(hard.map((r) => [r.checkpoint, r.score, r.attempts])).toEqual([['ckpt-a', 0.5, 2]]);
    const events = runtime.ports.events.recent({ limit: 10 });
    expect(events.filter((e) => e.type === 'suite.saturated').map((e) => e.detail)).toEqual([{ suite: 'easy', sweepId: 's1', threshold: 0.9 }]);
    expect(events.find((e) => e.type === 'sweep.finished')?.detail).toMatchObject({ status: 'partial', failed: ['c1-s0-strict', 'c1-s1-strict'] });
  }, 90_000);

  it('a refused submission (Batch.ClientException) is not retried: the shard fails at once and is reported', async () => {
    const runtime = open(freshDir(), refuseSubmissions);
    await putTestSuite(runtime.ports, 'easy', ['e1']);
    await putTestSuite(runtime.ports, 'hard', ['h1']);
    const { executionId } = await runtime.workflows.start(SWEEP_WORKFLOW, { name: 'refused', input: request('refused', ['ckpt-a'], { suites: ['easy'] }) });
    const done = await runtime.workflows.waitFor(executionId, { timeoutMs: 60_000 });
    expect(done.output).toEqual({ sweepId: 'refused', status: 'failed', succeededShards: 0, failedShards: 1 });
    const history = runtime.workflows.history(executionId);
    expect(history.filter((e) => e.type === 'StateFailed' && e.state === 'SubmitShardJob').map((e) => e.error)).toEqual(['Batch.ClientException']);
    expect(history.filter((e) => e.type === 'StateRetried' && e.state === 'SubmitShardJob')).toEqual([]);
    expect((await listAll(runtime.ports, 'SWEEP#refused', 'SHARD#')).map((s) => [s.sk, s.status, s.error])).toEqual([['SHARD#c0-s0-strict', 'failed', 'Batch.ClientException']]);
    expect(await runtime.jobs.list({})).toEqual([]);
  }, 60_000);

  it('a plan over the inline bound runs through the Distributed Map branch, with the same iteration', async () => {
    const runtime = open(freshDir(), undefined, 1);
    await putTestSuite(runtime.ports, 'easy', ['e1']);
    await putTestSuite(runtime.ports, 'hard', ['h1', 'h2']);
    const { executionId } = await runtime.workflows.start(SWEEP_WORKFLOW, { name: 'big', input: request('big', ['ckpt-a', 'ckpt-broken'], { suites: ['easy'] }) });
    const done = await runtime.workflows.waitFor(executionId, { timeoutMs: 60_000 });
    expect(done.output).toEqual({ sweepId: 'big', status: 'partial', succeededShards: 1, failedShards: 1 });
    const entered = new Set(runtime.workflows.history(executionId).filter((e) => e.type === 'StateEntered').map((e) => e.state));
    expect(entered.has('RunShardsDistributed')).toBe(true);
    expect(entered.has('RunShardsInline')).toBe(false);
    expect([...entered].filter((s) => s?.endsWith('Distributed')).sort()).toEqual(['AggregateShardDistributed', 'IsShardDoneDistributed', 'RecordShardFailureDistributed', 'RunShardsDistributed', 'SubmitShardJobDistributed']);
  }, 60_000);

  it('starting the same name again returns the finished execution; another input is refused', async () => {
    const runtime = open(freshDir());
    await putTestSuite(runtime.ports, 'easy', ['e1', 'e2']);
    await putTestSuite(runtime.ports, 'hard', ['h1', 'h2']);
    const input = request('s2', ['ckpt-a'], { suites: ['easy'] });
    const first = await runtime.workflows.start(SWEEP_WORKFLOW, { name: 's2', input });
    await runtime.workflows.waitFor(first.executionId, { timeoutMs: 60_000 });
    const again = await runtime.workflows.start(SWEEP_WORKFLOW, { name: 's2', input: JSON.parse(JSON.stringify(input)) });
    expect(again).toEqual(first);
    expect(runtime.workflows.runs(first.executionId)).toBe(1);
    expect((await runtime.jobs.list({})).length).toBe(1);
    await expect(runtime.workflows.start(SWEEP_WORKFLOW, { name: 's2', input: { ...input, modes: ['lenient'] } })).rejects.toThrow(
      expect.objectContaining({ name: 'Flywheel.ExecutionAlreadyExists' }),
    );
  }, 60_000);

  it('resumes after the runtime is killed mid-sweep: same name, no shard or attempt counted twice', async () => {
    const dataDir = freshDir();
    {
      const seed = open(dataDir);
      await putTestSuite(seed.ports, 'easy', ['e1', 'e2', 'e3', 'e4']);
      await putTestSuite(seed.ports, 'hard', ['h1', 'h2', 'h3', 'h4']);
      await runtimes.splice(runtimes.indexOf(seed), 1)[0]!.close();
    }
    const input = request('s3', ['ckpt-a', 'ckpt-slow']);
    const child = spawn(process.execPath, [RUNNER, dataDir, model.baseUrl, 's3', JSON.stringify(input)], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (chunk: Buffer) => (chunk.toString().includes('started') ? resolve() : undefined));
        child.once('exit', (code) => reject(new Error(`runner exited early (${code})`)));
      });
      // Kill it once some attempts of the slow checkpoint are written, but not all (its model answers in 400 ms).
      // Only the stores: the jobs of this folder belong to the runner process until it dies.
      const probe = openLocalPorts(dataDir);
      const slowRun = `EVAL#${runIdOf('s3', 'c1-s0-strict')}`;
      await waitFor(
        async () => {
          if (child.exitCode !== null || child.signalCode !== null) throw new RunnerExitedError(`runner exited before the slow shard wrote an attempt (${child.exitCode ?? child.signalCode})`);
          return (await listAll(probe, slowRun)).length > 0 ? true : undefined;
        },
        { what: 'an attempt of the slow shard to be written', timeoutMs: 45_000, stopOn: (error) => error instanceof RunnerExitedError },
      );
      child.kill('SIGKILL');
      await exited;
      probe.close();
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }

    const runtime = open(dataDir);
    const executionId = (await runtime.workflows.describe(`arn:aws:states:local:000000000000:execution:${SWEEP_WORKFLOW}:s3`)).executionId;
    expect((await runtime.workflows.describe(executionId)).status).toBe('RUNNING');
    const before = await listAll(runtime.ports, `EVAL#${runIdOf('s3', 'c1-s0-strict')}`);
    expect(before.length).toBeGreaterThan(0);
    expect(before.length).toBeLessThan(4);

    const again = await runtime.workflows.start(SWEEP_WORKFLOW, { name: 's3', input });
    expect(again.executionId).toBe(executionId);
    const done = await runtime.workflows.waitFor(executionId, { timeoutMs: 60_000 });
    expect(done.status).toBe('SUCCEEDED');
    expect(done.output).toEqual({ sweepId: 's3', status: 'succeeded', succeededShards: 4, failedShards: 0 });
    expect(runtime.workflows.runs(executionId)).toBe(2);

    // Nothing counted twice: one attempt record per task per shard, one result per checkpoint per suite, the
    // attempts written before the crash kept as they were.
    for (const shard of ['c0-s0-strict', 'c0-s1-strict', 'c1-s0-strict', 'c1-s1-strict']) {
      const attempts = await listAll(runtime.ports, `EVAL#${runIdOf('s3', shard)}`);
      expect(attempts.map((a) => a.taskId).sort(), shard).toEqual(shard.includes('-s0-') ? ['e1', 'e2', 'e3', 'e4'] : ['h1', 'h2', 'h3', 'h4']);
    }
    const after = await listAll(runtime.ports, `EVAL#${runIdOf('s3', 'c1-s0-strict')}`);
    for (const a of before) expect(after.find((b) => b.sk === a.sk)).toEqual(a);
    const results = [...(await listAll(runtime.ports, 'RESULT#easy#strict')), ...(await listAll(runtime.ports, 'RESULT#hard#strict'))];
    expect(results.map((r) => `${r.suite}/${r.checkpoint}:${r.score}`).sort()).toEqual([
      'easy/ckpt-a:1',
      'easy/ckpt-slow:1',
      'hard/ckpt-a:0.25',
      'hard/ckpt-slow:0.25',
    ]);
    // Every shard has exactly one succeeded job. A shard that had finished before the crash was not run again (its
    // job is found by its idempotency token); the job the crash interrupted failed (the jobs driver's recovery) and
    // the definition's job retry ran a fresh one, which resumed the shard's attempts.
    const jobs = await runtime.jobs.list({ category: 'evaluation' });
    const byShard = Map.groupBy(jobs, (j) => j.name);
    expect([...byShard.keys()].sort()).toEqual(['s3-c0-s0-strict', 's3-c0-s1-strict', 's3-c1-s0-strict', 's3-c1-s1-strict']);
    for (const [name, shardJobs] of byShard) expect(shardJobs.filter((j) => j.status === 'SUCCEEDED'), name).toHaveLength(1);
    const interrupted = jobs.filter((j) => j.status === 'FAILED');
    expect(interrupted.length).toBeGreaterThan(0);
    expect(interrupted.length).toBeLessThanOrEqual(2); // at most the two jobs running when it was killed (gpu pool: 2)
    expect(jobs).toHaveLength(4 + interrupted.length);
    expect(runtime.ports.events.recent({ type: 'sweep.finished' })).toHaveLength(1);
  }, 120_000);
});
