/**
 * A local sweep runtime with the registry's real steps (`sweepStepHandlers`) in its own process, for the crash test:
 * opens the local ports, jobs (the registry tests' scripted rollout job) and workflows on argv[2], starts the sweep
 * argv[4] (JSON body of `POST /v1/sweeps`) with the settings argv[3] through `startSweep`, prints `started`, and runs
 * until killed. An optional argv[5] names a JSON file with the definition to run instead of the local rendering (the
 * synthesized one, `synthesized-local-sweep.ts`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalJobs } from '../../../lib/drivers/local/local-jobs.ts';
import { openLocalPorts } from '../../../lib/drivers/local/local-ports.ts';
import { LocalWorkflows } from '../../../lib/drivers/local/local-workflows.ts';
import { openDatabase } from '../../../lib/drivers/local/sqlite-database.ts';
import type { SweepSettings } from '../../../lib/config/stages.ts';
import { startSweep } from '../../../lib/sweeps/start-sweep.ts';
import { sweepStepHandlers } from '../../../lib/sweeps/sweep-step-handlers.ts';
import { localSweepWorkflow } from '../../../lib/sweeps/local/local-sweep-workflow.ts';
import { SWEEP_WORKFLOW } from '../../../lib/sweeps/workflow/sweep.asl.ts';
import type { SweepSteps } from '../../../lib/sweeps/workflow/sweep-steps.ts';

export const SCRIPTED_ROLLOUT_JOB = 'test/sweeps/support/scripted-rollout-job.ts';

/** The runtime pieces, as the runner and the test's own resumed runtime open them. */
export function openRegistrySweepRuntime(
  dataDir: string,
  settings: SweepSettings,
  wrapSteps: (steps: SweepSteps) => SweepSteps = (steps) => steps,
  options: { definition?: object } = {},
) {
  const ports = openLocalPorts(dataDir);
  const jobs = new LocalJobs({
    dataDir,
    definitions: { rollout: { command: ['node', SCRIPTED_ROLLOUT_JOB] } },
    env: { ...process.env, FLYWHEEL_DATA_DIR: dataDir, FLYWHEEL_SCRIPTED_RATES: JSON.stringify({ 'ck-0': 0.2, 'ck-1': 0.3 }) },
    pollMs: 50,
    killGraceMs: 500,
    maxConcurrency: { gpu: 1 },
  });
  const steps = wrapSteps(sweepStepHandlers({ settings, notify: { log: () => {} } }));
  const workflows = new LocalWorkflows(
    openDatabase(join(dataDir, 'workflows.sqlite')),
    { [SWEEP_WORKFLOW]: { ...localSweepWorkflow({ steps, ports, jobs, pollMs: 50 }), ...(options.definition ? { definition: options.definition } : {}) } },
    { retryPauseOverrides: { SubmitShardJob: 0, AggregateShard: 0, RecordShardFailure: 0 }, heartbeatMs: 500 },
  );
  return {
    ports: Object.assign(ports, { workflows }),
    jobs,
    workflows,
    async close() {
      await workflows.close();
      await jobs.close();
      ports.close();
    },
  };
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const [dataDir, settingsJson, bodyJson, definitionFile] = process.argv.slice(2) as [string, string, string, string | undefined];
  const settings = JSON.parse(settingsJson) as SweepSettings;
  const definition = definitionFile ? (JSON.parse(readFileSync(definitionFile, 'utf8')) as object) : undefined;
  const runtime = openRegistrySweepRuntime(dataDir, settings, undefined, definition ? { definition } : {});
  const started = await startSweep(runtime.ports, JSON.parse(bodyJson), settings);
  process.stdout.write(`started ${started.executionId}\n`);
  setInterval(() => {}, 1 << 30);
}
