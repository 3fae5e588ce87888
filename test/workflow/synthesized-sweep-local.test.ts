/**
 * The sweep definition the CDK app synthesizes (stage dev), its tokens resolved to the local ARNs
 * (`support/synthesized-local-sweep.ts`), run end to end by the local workflows driver with the registry's real steps
 * (`sweepStepHandlers`) and the local jobs driver running a scripted rollout job: small suites, two checkpoints, both
 * modes; one shard that always fails (caught and reported), one that fails once (retried, then counted), a step
 * whose answer is lost once (retried, idempotent), and a suite whose best strict score reaches the threshold (marked
 * saturated, `suite.saturated` published once, people told). And a runtime running it killed mid-sweep (SIGKILL):
 * started again, the execution resumes under its name and counts every attempt once.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalJobs } from '../../lib/drivers/local/local-jobs.ts';
import { LocalWorkflows } from '../../lib/drivers/local/local-workflows.ts';
import { taskStates } from '../../lib/drivers/local/workflows/task-states.ts';
import { openDatabase } from '../../lib/drivers/local/sqlite-database.ts';
import { TransientError } from '../../lib/errors.ts';
import { getSuite } from '../../lib/registry/get-suite.ts';
import { registryKeys } from '../../lib/registry/record-keys.ts';
import { registerSuite } from '../../lib/registry/register-suite.ts';
import { SUITE_SATURATED } from '../../lib/sweeps/check-saturation.ts';
import { sweepStepHandlers } from '../../lib/sweeps/sweep-step-handlers.ts';
import { localSweepArns, localSweepWorkflow } from '../../lib/sweeps/local/local-sweep-workflow.ts';
import { SWEEP_WORKFLOW, sweepDefinition } from '../../lib/sweeps/workflow/sweep.asl.ts';
import { SWEEP_STEP_NAMES, type SweepSteps } from '../../lib/sweeps/workflow/sweep-steps.ts';
import { sampleTask } from '../sweeps/support/scripted-rollout.ts';
import { openSweepFixture, type SweepFixture } from '../sweeps/support/sweep-fixture.ts';
import { openRegistrySweepRuntime } from './support/registry-sweep-runner.ts';
import { synthesizedLocalSweepDefinition } from './support/synthesized-local-sweep.ts';
import { waitFor } from '../support/wait-for.ts';

const FLAKY_ROLLOUT_JOB = fileURLToPath(new URL('./support/flaky-rollout-job.ts', import.meta.url));
const RUNNER = fileURLToPath(new URL('./support/registry-sweep-runner.ts', import.meta.url));
/** The runner process ended while the test waited on it: no later check can succeed. */
class RunnerExitedError extends Error {}
const DAY_MS = 24 * 3600 * 1000;
/** A ceiling, not a budget: alone the file takes about 13 s (synth 2 s, each run 4–6 s); the full suite's load can triple that. */
const TEST_TIMEOUT_MS = 120_000;

let fx: SweepFixture | undefined;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  fx?.close();
});

describe('the synthesized sweep definition, run locally', () => {
  it('resolves every token of the DefinitionString to a local ARN, giving the very definition the local runtime renders', () => {
    const { definition, resolved } = synthesizedLocalSweepDefinition('dev');
    const arns = localSweepArns();
    // Each step function, the GPU queue and the rollout job definition appear (the Map's two iterations share the shard ones).
    expect(new Set(resolved.map((r) => r.arn))).toEqual(new Set([...SWEEP_STEP_NAMES.map((s) => arns.functions[s]), arns.gpuJobQueue, arns.rolloutJobDefinition]));
    expect(resolved.every((r) => r.token.startsWith('{"Fn::'))).toBe(true);
    expect(definition).toEqual(sweepDefinition(localSweepArns()));
  }, TEST_TIMEOUT_MS);

  it('runs end to end: results per checkpoint × suite × mode, a failing shard caught, retries, a saturated suite alerted', async () => {
    const { definition } = synthesizedLocalSweepDefinition('dev');
    // A 4-task suite may saturate here: the stage's minimum (default 20 tasks) is lowered for this small fixture.
    fx = openSweepFixture({ settings: { shardMaxTasks: 3, tasksPerChild: 3, saturationMinTasks: 4 } });
    const fixture = fx;
    await fixture.seed({ checkpoints: 2, suites: 1, tasks: 4 }); // ck-0, ck-1; suite-0: t000–t003
    const suite1Tasks = Array.from({ length: 6 }, (_, t) => `t${String(t).padStart(3, '0')}`);
    await fixture.ports.records.putMany(suite1Tasks.map((t) => ({ ...registryKeys.task('suite-1', t), kind: 'forge-task', task: sampleTask('suite-1', t) })));
    await registerSuite(fixture.ports, { id: 'suite-1', visibility: 'private', owner: 'evals', tasks: { kind: 'records' }, taskIds: suite1Tasks });
    fixture.tick(30 * DAY_MS); // the suites' useful life when one saturates

    const jobs = new LocalJobs({
      dataDir: fixture.dir,
      definitions: { rollout: { command: ['node', FLAKY_ROLLOUT_JOB] } },
      env: {
        ...process.env,
        FLYWHEEL_DATA_DIR: fixture.dir,
        // Task t<k> passes when k < rate × 10: ck-0 passes t000–t001, ck-1 t000–t003 (all of suite-0: 1.0 ≥ 0.9).
        FLYWHEEL_SCRIPTED_RATES: JSON.stringify({ 'ck-0': 0.2, 'ck-1': 0.4 }),
        // Shard c<checkpoint>-s<suite>-<mode>-<k>: ck-0 × suite-1 × strict, tasks t000–t002, fails every try.
        FLYWHEEL_SCRIPTED_FAIL_SHARDS: 'c0-s1-strict-0',
        // ck-1 × suite-0 × strict, tasks t000–t002, fails its first try only.
        FLYWHEEL_SCRIPTED_FLAKY_SHARDS: 'c1-s0-strict-0',
      },
      pollMs: 50,
      killGraceMs: 500,
      maxConcurrency: { gpu: 4 },
    });
    closers.push(() => jobs.close());
    const alerts: string[] = [];
    const steps = sweepStepHandlers({ settings: fixture.settings, notify: { log: (line) => alerts.push(line) } });
    // check-saturation does its work, then its answer is lost once (as a Lambda timing out after writing).
    let saturationCalls = 0;
    const flakySteps: SweepSteps = {
      ...steps,
      'check-saturation': async (ports, input) => {
        const answer = await steps['check-saturation'](ports, input);
        if (++saturationCalls === 1) throw new TransientError('answer lost (test)');
        return answer;
      },
    };
    const spec = { ...localSweepWorkflow({ steps: flakySteps, ports: fixture.ports, jobs, pollMs: 50 }), definition };
    const workflows = new LocalWorkflows(openDatabase(join(fixture.dir, 'workflows.sqlite')), { [SWEEP_WORKFLOW]: spec }, {
      // The definition's Retry fields decide what is retried and how often; the tests do not sleep through the pauses.
      retryPauseOverrides: Object.fromEntries(taskStates(definition).map(([name]) => [name, 0])),
      heartbeatMs: 500,
    });
    closers.push(() => workflows.close());
    fixture.ports.workflows = workflows;

    const started = await fixture.request('POST', '/v1/sweeps', { body: { sweepId: 'synth-1', modes: ['strict', 'lenient'] } });
    expect(started.status).toBe(202);
    expect(started.json).toMatchObject({ checkpoints: ['ck-0', 'ck-1'], suites: ['suite-0', 'suite-1'], modes: ['strict', 'lenient'] });
    const done = await workflows.waitFor(started.json.executionId, { timeoutMs: 90_000 });
    // 2 checkpoints × 2 suites × 2 modes × 2 shards (suite-0: 3 + 1 tasks, suite-1: 3 + 3) = 16; one failed.
    expect(done).toMatchObject({ status: 'SUCCEEDED', output: { sweepId: 'synth-1', status: 'partial', succeededShards: 15, failedShards: 1 } });

    const report = (await fixture.request('GET', '/v1/sweeps/synth-1')).json;
    expect(report.sweep).toMatchObject({ status: 'partial', shardCount: 16 });
    const rows = report.results.map((r: any) => `${r.checkpoint}/${r.suite}/${r.mode}: ${r.passes}/${r.n} of ${r.tasks} (${r.shardsAggregated} ok, ${r.shardsFailed} failed)`);
    expect(rows.sort()).toEqual([
      'ck-0/suite-0/lenient: 2/4 of 4 (2 ok, 0 failed)',
      'ck-0/suite-0/strict: 2/4 of 4 (2 ok, 0 failed)',
      'ck-0/suite-1/lenient: 2/6 of 6 (2 ok, 0 failed)',
      'ck-0/suite-1/strict: 0/3 of 6 (1 ok, 1 failed)',
      'ck-1/suite-0/lenient: 4/4 of 4 (2 ok, 0 failed)',
      'ck-1/suite-0/strict: 4/4 of 4 (2 ok, 0 failed)',
      'ck-1/suite-1/lenient: 4/6 of 6 (2 ok, 0 failed)',
      'ck-1/suite-1/strict: 4/6 of 6 (2 ok, 0 failed)',
    ]);

    // The failing shard: tried twice (BATCH_JOB_RETRY), caught in its iteration, recorded and reported.
    expect(report.failedShards).toEqual([expect.objectContaining({ shardId: 'c0-s1-strict-0', checkpoint: 'ck-0', suite: 'suite-1', mode: 'strict' })]);
    const shardJobs = (await jobs.list({ category: 'evaluation' })).filter((j) => j.arraySize);
    const triesOf = (shardId: string) => shardJobs.filter((j) => j.name === `synth-1-${shardId}`).map((j) => j.status).sort();
    expect(triesOf('c0-s1-strict-0')).toEqual(['FAILED', 'FAILED']);
    // The flaky shard: failed once, retried, and its attempts counted once (ck-1/suite-0/strict is 4/4 above).
    expect(triesOf('c1-s0-strict-0')).toEqual(['FAILED', 'SUCCEEDED']);
    expect(shardJobs.filter((j) => j.status === 'SUCCEEDED')).toHaveLength(15);
    const history = workflows.history(started.json.executionId);
    const retried = history.filter((e) => e.type === 'StateRetried').map((e) => e.state);
    expect(retried.sort()).toEqual(['CheckSaturation', 'SubmitShardJob', 'SubmitShardJob']);
    expect(history.filter((e) => e.type === 'StateEntered' && e.state === 'RecordShardFailure')).toHaveLength(1);

    // Saturation: suite-0's best strict score (ck-1, 1.0) reaches the threshold 0.9; suite-1's (0.67) does not.
    expect(await getSuite(fixture.ports.records, 'suite-0')).toMatchObject({
      status: 'saturated',
      usefulLifeDays: 30,
      saturatedBySweep: 'synth-1',
      best: { score: 1, checkpoint: 'ck-1', sweepId: 'synth-1' },
    });
    expect(await getSuite(fixture.ports.records, 'suite-1')).toMatchObject({ status: 'active', best: { score: 4 / 6, checkpoint: 'ck-1' } });
    // Published once, though check-saturation ran twice (its first answer was lost).
    expect(saturationCalls).toBe(2);
    const published = fixture.ports.events.recent({ type: SUITE_SATURATED });
    expect(published).toHaveLength(1);
    expect(published[0]).toMatchObject({
      id: 'suite.saturated:suite-0:v1',
      detail: { suite: 'suite-0', version: 1, score: 1, threshold: 0.9, checkpoint: 'ck-1', sweepId: 'synth-1', usefulLifeDays: 30 },
    });
    expect(alerts.filter((l) => JSON.parse(l).title?.startsWith('Suite suite-0 v1 is saturated'))).toHaveLength(1);
    expect(fixture.ports.events.recent({ type: 'sweep.finished' })).toHaveLength(1);
  }, TEST_TIMEOUT_MS);

  it('resumes after a crash: the runtime running it killed mid-sweep, the sweep started again counts every attempt once', async () => {
    const { definition } = synthesizedLocalSweepDefinition('dev');
    fx = openSweepFixture({ settings: { shardMaxTasks: 2, tasksPerChild: 2 } });
    const fixture = fx;
    await fixture.seed({ checkpoints: 2, suites: 2, tasks: 4 });
    const definitionFile = join(fixture.dir, 'synthesized-sweep.json');
    writeFileSync(definitionFile, JSON.stringify(definition));
    const body = { sweepId: 'synth-crash', modes: ['strict'] };
    const executionId = LocalWorkflows.executionId(SWEEP_WORKFLOW, 'synth-crash');

    const child = spawn(process.execPath, [RUNNER, fixture.dir, JSON.stringify(fixture.settings), JSON.stringify(body), definitionFile], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (chunk: Buffer) => (chunk.toString().includes('started') ? resolve() : undefined));
        child.once('exit', (code) => reject(new Error(`runner exited early (${code})`)));
      });
      // Killed once two of the 8 shard jobs (2 checkpoints × 2 suites × 2 shards) have succeeded.
      const observer = new LocalJobs({ dataDir: fixture.dir, run: false });
      const succeeded = async () => (await observer.list({ category: 'evaluation', status: 'SUCCEEDED' })).filter((j) => j.arraySize).map((j) => j.name);
      await waitFor(
        async () => {
          if (child.exitCode !== null || child.signalCode !== null) throw new RunnerExitedError(`runner exited before two shard jobs succeeded (${child.exitCode ?? child.signalCode})`);
          return (await succeeded()).length >= 2 ? true : undefined;
        },
        { what: 'two shard jobs to succeed', timeoutMs: 45_000, everyMs: 25, stopOn: (error) => error instanceof RunnerExitedError },
      );
      child.kill('SIGKILL');
      await exited;
      const succeededBefore = await succeeded();
      await observer.close();
      expect(succeededBefore.length).toBeLessThan(8);

      const runtime = openRegistrySweepRuntime(fixture.dir, fixture.settings, undefined, { definition });
      closers.push(() => runtime.close());
      fixture.ports.workflows = runtime.workflows;
      expect((await runtime.workflows.describe(executionId)).status).toBe('RUNNING');
      const again = await fixture.request('POST', '/v1/sweeps', { body });
      expect(again).toMatchObject({ status: 202, json: { executionId } });
      const done = await runtime.workflows.waitFor(executionId, { timeoutMs: 90_000 });
      expect(done).toMatchObject({ status: 'SUCCEEDED', output: { sweepId: 'synth-crash', status: 'succeeded', succeededShards: 8, failedShards: 0 } });
      expect(runtime.workflows.runs(executionId)).toBe(2);

      // Scripted rates of the runner: ck-0 passes t000–t001, ck-1 t000–t002.
      const report = (await fixture.request('GET', '/v1/sweeps/synth-crash')).json;
      expect(report.results.map((r: any) => `${r.checkpoint}/${r.suite}/${r.mode}: ${r.passes}/${r.n} (${r.shardsAggregated} shards)`).sort()).toEqual([
        'ck-0/suite-0/strict: 2/4 (2 shards)',
        'ck-0/suite-1/strict: 2/4 (2 shards)',
        'ck-1/suite-0/strict: 3/4 (2 shards)',
        'ck-1/suite-1/strict: 3/4 (2 shards)',
      ]);
      const series = await fixture.request('GET', '/v1/results', { query: { suite: 'suite-1', checkpoint: 'ck-1', mode: 'strict' } });
      expect(series.json.items.map((r: any) => [r.sweepId, r.attempts])).toEqual([['synth-crash', 4]]);
      // The shards that had finished before the crash were not run again.
      const jobs = (await runtime.jobs.list({ category: 'evaluation' })).filter((j) => j.arraySize);
      for (const name of succeededBefore) expect(jobs.filter((j) => j.name === name), name).toHaveLength(1);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }, TEST_TIMEOUT_MS);
});
