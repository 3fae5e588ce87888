/**
 * A local sweep runtime over one data folder, as `npm start` wires it: local ports (SQLite records and events, file
 * blobs), the local jobs driver running `shard-job.ts` as the `rollout` definition, and the local workflows driver
 * running the sweep definition with the given steps. Retry pauses are zero so tests do not sleep through backoffs
 * (the definition's Retry fields still decide what is retried and how often).
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalJobs } from '../../../lib/drivers/local/local-jobs.ts';
import { openLocalPorts, type LocalPorts } from '../../../lib/drivers/local/local-ports.ts';
import { LocalWorkflows } from '../../../lib/drivers/local/local-workflows.ts';
import { taskStates } from '../../../lib/drivers/local/workflows/task-states.ts';
import { openDatabase } from '../../../lib/drivers/local/sqlite-database.ts';
import type { JobsPort } from '../../../lib/ports/jobs.ts';
import { localSweepArns, localSweepWorkflow } from '../../../lib/sweeps/local/local-sweep-workflow.ts';
import { SWEEP_WORKFLOW, sweepDefinition } from '../../../lib/sweeps/workflow/sweep.asl.ts';
import type { SweepSteps } from '../../../lib/sweeps/workflow/sweep-steps.ts';

export const SHARD_JOB_SCRIPT = fileURLToPath(new URL('./shard-job.ts', import.meta.url));

export interface SweepRuntime {
  ports: LocalPorts;
  jobs: LocalJobs;
  workflows: LocalWorkflows;
  close(): Promise<void>;
}

export function openSweepRuntime(options: {
  dataDir: string;
  modelUrl: string;
  steps: SweepSteps;
  /** Wraps the jobs port the state machine submits through (fault injection). */
  wrapJobs?: (jobs: JobsPort) => JobsPort;
  /** Plans with more shards take the Distributed Map (default: the definition's bound). */
  inlineMapMaxShards?: number;
}): SweepRuntime {
  const ports = openLocalPorts(options.dataDir);
  const jobs = new LocalJobs({
    dataDir: options.dataDir,
    definitions: { rollout: { command: ['node', SHARD_JOB_SCRIPT] } },
    maxConcurrency: { gpu: 2, cpu: 1 },
    pollMs: 50,
    killGraceMs: 500,
    env: { ...process.env, FLYWHEEL_DATA_DIR: options.dataDir, FLYWHEEL_TEST_MODEL_URL: options.modelUrl },
  });
  const zeroPauses = Object.fromEntries(taskStates(sweepDefinition(localSweepArns())).map(([name]) => [name, 0]));
  const workflows = new LocalWorkflows(
    openDatabase(join(options.dataDir, 'workflows.sqlite')),
    { [SWEEP_WORKFLOW]: localSweepWorkflow({
        steps: options.steps,
        ports,
        jobs: options.wrapJobs ? options.wrapJobs(jobs) : jobs,
        pollMs: 50,
        ...(options.inlineMapMaxShards !== undefined ? { definition: { inlineMapMaxShards: options.inlineMapMaxShards } } : {}),
      }) },
    { retryPauseOverrides: zeroPauses, heartbeatMs: 500 },
  );
  return {
    ports,
    jobs,
    workflows,
    async close() {
      await workflows.close();
      await jobs.close();
      ports.close();
    },
  };
}
