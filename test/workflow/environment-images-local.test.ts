/**
 * A sweep over a suite whose tasks name environment images, run end to end by the local workflows driver over the
 * definition `cdk synth` wrote (tokens resolved to the local ARNs), with the registry's real steps and the local
 * jobs driver running the scripted rollout job: plan-shards cuts the cell per image, the shards of an image take the
 * `SubmitShardJobInImage` path with their ShardRef's job definition (locally the rollout definition: the local jobs
 * driver runs no images), the others the plain submit, and the cell counts every task once.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalJobs } from '../../lib/drivers/local/local-jobs.ts';
import { LocalWorkflows } from '../../lib/drivers/local/local-workflows.ts';
import { taskStates } from '../../lib/drivers/local/workflows/task-states.ts';
import { openDatabase } from '../../lib/drivers/local/sqlite-database.ts';
import { registryKeys } from '../../lib/registry/record-keys.ts';
import { registerSuite } from '../../lib/registry/register-suite.ts';
import { readShardSpec } from '../../lib/sweeps/shard-spec.ts';
import { sweepStepHandlers } from '../../lib/sweeps/sweep-step-handlers.ts';
import { localSweepArns, localSweepWorkflow } from '../../lib/sweeps/local/local-sweep-workflow.ts';
import { SWEEP_WORKFLOW } from '../../lib/sweeps/workflow/sweep.asl.ts';
import { readPlan } from '../../lib/sweeps/plan-shards.ts';
import { sampleTask } from '../sweeps/support/scripted-rollout.ts';
import { openSweepFixture, type SweepFixture } from '../sweeps/support/sweep-fixture.ts';
import { synthesizedLocalSweepDefinition } from './support/synthesized-local-sweep.ts';

const ROLLOUT_JOB = fileURLToPath(new URL('../sweeps/support/scripted-rollout-job.ts', import.meta.url));
const DJANGO = 'swebench/sweb.eval.x86_64.django_1776_django-11099:latest';
const SYMPY = 'swebench/sweb.eval.x86_64.sympy_1776_sympy-20590:latest';

let fx: SweepFixture | undefined;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  fx?.close();
});

describe('a sweep over tasks in environment images, on the local runtime', () => {
  it('submits the image shards under their job definition and the others as before; every task counted once', async () => {
    const { definition } = synthesizedLocalSweepDefinition('dev');
    fx = openSweepFixture({ settings: { shardMaxTasks: 2, tasksPerChild: 2 } });
    const fixture = fx;
    await fixture.seed({ checkpoints: 1, suites: 0, tasks: 0 });
    const ids = ['t000', 't001', 't002', 't003', 't004', 't005'];
    // t000–t002: no image; t003, t004: DJANGO; t005: SYMPY.
    const imageOf = (i: number) => (i < 3 ? undefined : i < 5 ? DJANGO : SYMPY);
    await fixture.ports.records.putMany(ids.map((id, i) => ({ ...registryKeys.task('mixed', id), kind: 'forge-task', task: { ...sampleTask('mixed', id), ...(imageOf(i) ? { environment: { image: imageOf(i)! } } : {}) } })));
    await registerSuite(fixture.ports, { id: 'mixed', visibility: 'public', owner: 'evals', tasks: { kind: 'records' }, taskIds: ids });

    const jobs = new LocalJobs({
      dataDir: fixture.dir,
      definitions: { rollout: { command: ['node', ROLLOUT_JOB] } },
      // ck-0 passes t000–t002 (rate 0.3 → t < 3).
      env: { ...process.env, FLYWHEEL_DATA_DIR: fixture.dir, FLYWHEEL_SCRIPTED_RATES: JSON.stringify({ 'ck-0': 0.3 }) },
      pollMs: 50,
      killGraceMs: 500,
      maxConcurrency: { gpu: 4 },
    });
    closers.push(() => jobs.close());
    const steps = sweepStepHandlers({ settings: fixture.settings, notify: { log: () => {} } });
    const spec = { ...localSweepWorkflow({ steps, ports: fixture.ports, jobs, pollMs: 50 }), definition };
    const workflows = new LocalWorkflows(openDatabase(join(fixture.dir, 'workflows.sqlite')), { [SWEEP_WORKFLOW]: spec }, {
      retryPauseOverrides: Object.fromEntries(taskStates(definition).map(([name]) => [name, 0])),
      heartbeatMs: 500,
    });
    closers.push(() => workflows.close());
    fixture.ports.workflows = workflows;

    const started = await fixture.request('POST', '/v1/sweeps', { body: { sweepId: 'img-local', modes: ['strict'] } });
    expect(started.status).toBe(202);
    const done = await workflows.waitFor(started.json.executionId, { timeoutMs: 90_000 });
    // no image: 3 tasks → 2 shards; DJANGO: 2 → 1; SYMPY: 1 → 1.
    expect(done).toMatchObject({ status: 'SUCCEEDED', output: { sweepId: 'img-local', status: 'succeeded', succeededShards: 4, failedShards: 0 } });

    const plan = await readPlan(fixture.ports, 'img-local');
    expect(plan.map((s) => [s.shardId, s.jobDefinition ?? null])).toEqual([
      ['c0-s0-strict-0', null],
      ['c0-s0-strict-1', null],
      ['c0-s0-strict-2', localSweepArns().rolloutJobDefinition],
      ['c0-s0-strict-3', localSweepArns().rolloutJobDefinition],
    ]);
    const images = await Promise.all(plan.map(async (s) => (await readShardSpec(fixture.ports.blobs, s.shardKey)).environmentImage ?? null));
    expect(images).toEqual([null, null, DJANGO, SYMPY]);
    const entered = (state: string) => workflows.history(started.json.executionId).filter((e) => e.type === 'StateEntered' && e.state === state).length;
    expect(entered('SubmitShardJob')).toBe(2);
    expect(entered('SubmitShardJobInImage')).toBe(2);

    const report = (await fixture.request('GET', '/v1/sweeps/img-local')).json;
    expect(report.results.map((r: any) => `${r.checkpoint}/${r.suite}/${r.mode}: ${r.passes}/${r.n} of ${r.tasks} (${r.shardsAggregated} shards)`)).toEqual(['ck-0/mixed/strict: 3/6 of 6 (4 shards)']);
  }, 120_000);
});
