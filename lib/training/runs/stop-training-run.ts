import { ExecutionNotFoundError } from '../../ports/workflow-errors.ts';
import type { JobsPort } from '../../ports/jobs.ts';
import type { Ports } from '../../ports/ports.ts';
import type { WorkflowsPort } from '../../ports/workflows.ts';
import { TERMINAL_TRAINING_RUN_STATUSES, type TrainingRun } from '../schemas.ts';
import { TrainingRunErrorNames } from './run-errors.ts';
import { cancelRunJobs } from './run-job.ts';
import { requireRun, SAME, updateRun } from './run-store.ts';

/**
 * Stops a run: its status becomes `stopped` first (so a step that finishes meanwhile sees it and ends, and never
 * overwrites it), then its execution is stopped (ABORTED) and its policy job cancelled. A run that has ended is
 * answered as it is (stopping twice is harmless). The trainer's state blobs stay: `resumeTrainingRun` continues it.
 *
 * @example
 * const run = await stopTrainingRun(ports, 'rl-42', 'alice'); // run.status: 'stopped'
 */
export async function stopTrainingRun(
  ports: Pick<Ports, 'records' | 'now'> & { workflows?: WorkflowsPort | undefined; jobs?: JobsPort | undefined },
  runId: string,
  actor?: string,
): Promise<TrainingRun> {
  let stopping = false;
  const run = await updateRun(ports, runId, (r) => {
    stopping = !TERMINAL_TRAINING_RUN_STATUSES.includes(r.status);
    return stopping ? { ...r, status: 'stopped', endedAt: ports.now().toISOString(), ...(actor ? { stoppedBy: actor } : {}) } : SAME;
  });
  if (!stopping) return run;
  const cause = `training run ${runId} stopped${actor ? ` by ${actor}` : ''}`;
  if (ports.workflows && run.executionId) {
    await ports.workflows.stop(run.executionId, { error: TrainingRunErrorNames.stopped, cause }).catch((error: unknown) => {
      if (!(error instanceof ExecutionNotFoundError)) throw error;
    });
  }
  if (ports.jobs) await cancelRunJobs(ports.jobs, run, cause);
  return requireRun(ports, runId);
}
