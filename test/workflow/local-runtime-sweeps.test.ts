/**
 * Sweeps in the real local runtime (`npm start`'s `startLocalRuntime`): registering a checkpoint over HTTP publishes
 * `checkpoint.registered` on the local bus, which starts a sweep of that checkpoint (the local twin of the Workflows
 * stack's rule) run by the local workflows driver with the registry's steps and the local jobs driver; the report is
 * served over HTTP. The schedule is off with FLYWHEEL_SCHEDULE=off and on otherwise.
 */
import { join } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LocalJobs } from '../../lib/drivers/local/local-jobs.ts';
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { LocalWorkflows } from '../../lib/drivers/local/local-workflows.ts';
import { openDatabase } from '../../lib/drivers/local/sqlite-database.ts';
import { startLocalRuntime, type LocalRuntime } from '../../lib/local/runtime.ts';
import { registryKeys } from '../../lib/registry/record-keys.ts';
import { registerSuite } from '../../lib/registry/register-suite.ts';
import { startLocalSweeps } from '../../lib/sweeps/local/local-sweep-runtime.ts';
import { checkpointSweepId } from '../../lib/sweeps/workflow/start-sweep-from-trigger.ts';
import { sampleTask } from '../sweeps/support/scripted-rollout.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import { PROCESS_TEST_TIMEOUT_MS, waitFor } from '../support/wait-for.ts';

const logger = new Logger({ serviceName: 'test', logLevel: 'ERROR' });
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const tempDir = tempDirs('flywheel-rt-sweeps-');
/** An upper bound for a sweep of three tasks run as local child processes, generous for a busy machine. */
const SWEEP_TIMEOUT_MS = 120_000;
/** What `startLocalSweeps` logs after handling a `checkpoint.registered` event, whatever came of it. */
const CHECKPOINT_TRIGGER_LOGS = ['sweep started for a registered checkpoint', 'sweep refused for a registered checkpoint', 'checkpoint.registered did not start a sweep'];

function withEnv(vars: Record<string, string>): void {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  cleanups.push(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
}

describe('sweeps in the local runtime', () => {
  it('a checkpoint registered over HTTP is swept: execution named after it, shards run as local jobs, report over HTTP', async () => {
    const dataDir = tempDir();
    {
      const seed = openLocalPorts(dataDir);
      const taskIds = ['t000', 't001', 't002'];
      await seed.records.putMany(taskIds.map((t) => ({ ...registryKeys.task('smoke', t), kind: 'forge-task', task: sampleTask('smoke', t) })));
      await registerSuite(seed, { id: 'smoke', visibility: 'public', owner: 'evals', tasks: { kind: 'records' }, taskIds });
      seed.close();
    }
    withEnv({
      FLYWHEEL_SCHEDULE: 'off',
      FLYWHEEL_LOCAL_JOB_DEFINITIONS: JSON.stringify({ rollout: { command: ['node', 'test/sweeps/support/scripted-rollout-job.ts'] } }),
      FLYWHEEL_SCRIPTED_RATES: JSON.stringify({ 'ck-new': 1 }),
    });
    // The sweeps' subscriber to checkpoint.registered logs once per event it has handled (started, refused or failed).
    const logged = [vi.spyOn(logger, 'info'), vi.spyOn(logger, 'warn'), vi.spyOn(logger, 'error')];
    cleanups.push(() => logged.forEach((spy) => spy.mockRestore()));
    const triggersHandled = () => logged.flatMap((spy) => spy.mock.calls).filter(([message]) => CHECKPOINT_TRIGGER_LOGS.includes(String(message))).length;
    const runtime: LocalRuntime = await startLocalRuntime({ dataDir, port: 0, consumerThread: false, logger });
    cleanups.push(() => runtime.close());
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${runtime.url}${path}`, {
        method,
        headers: { 'x-api-key': runtime.apiKey, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, json: (await res.json()) as any };
    };

    const registered = await call('POST', '/v1/checkpoints', { id: 'ck-new', model: 'coder', serving: { kind: 'endpoint', model: 'openai:ck-new@http://127.0.0.1:9/v1' } });
    expect(registered.status).toBeLessThan(300);
    const sweepId = checkpointSweepId('ck-new');
    const reader = new LocalWorkflows(openDatabase(join(dataDir, 'workflows.sqlite')), {});
    cleanups.push(() => reader.close());
    const executionId = LocalWorkflows.executionId('sweep', sweepId);
    await waitFor(async () => ((await reader.list('sweep')).some((e) => e.executionId === executionId) ? true : undefined), {
      what: 'a sweep execution started for the registered checkpoint',
      everyMs: 100,
    });
    const done = await reader.waitFor(executionId, { timeoutMs: SWEEP_TIMEOUT_MS, pollMs: 100 });
    expect(done).toMatchObject({ status: 'SUCCEEDED', input: { sweepId, trigger: 'checkpoint', checkpoints: ['ck-new'], suites: ['smoke'] } });
    expect(done.output).toMatchObject({ sweepId, status: 'succeeded', failedShards: 0 });

    const report = await call('GET', `/v1/sweeps/${sweepId}`);
    expect(report.status).toBe(200);
    expect(report.json.sweep).toMatchObject({ sweepId, status: 'succeeded' });

    // A repeated delivery of the same event starts no second sweep.
    const handledBefore = triggersHandled();
    await call('POST', '/v1/checkpoints', { id: 'ck-new', model: 'coder', serving: { kind: 'endpoint', model: 'openai:ck-new@http://127.0.0.1:9/v1' } });
    await waitFor(() => (triggersHandled() > handledBefore ? true : undefined), { what: 'the repeated checkpoint.registered to be handled' });
    expect((await reader.list('sweep')).map((e) => e.name)).toEqual([sweepId]);
  }, PROCESS_TEST_TIMEOUT_MS);

  it('the schedule is on by default and off with FLYWHEEL_SCHEDULE=off', async () => {
    const dataDir = tempDir();
    const ports = openLocalPorts(dataDir);
    const jobs = new LocalJobs({ dataDir, run: false });
    cleanups.push(async () => {
      await jobs.close();
      ports.close();
    });
    withEnv({ FLYWHEEL_SCHEDULE: 'off' });
    const off = startLocalSweeps({ dataDir, ports, jobs, logger });
    expect(off.schedule).toBeUndefined();
    await off.close();
    delete process.env.FLYWHEEL_SCHEDULE;
    const on = startLocalSweeps({ dataDir, ports, jobs, logger });
    cleanups.push(() => on.close());
    expect(on.schedule?.next().toISOString()).toMatch(/T02:00:00\.000Z$/);
  });
});
