/**
 * The run's policy job, found by what the run knows of it: its id once the job ended (register-checkpoint records it),
 * else its name among the training jobs that have not ended (the state machine submits it; a `.sync` task hands its
 * id back only at the end).
 *
 * @example
 * const cancelled = await cancelRunJobs(ports.jobs, run, 'stopped by alice');
 */
import { TERMINAL_JOB_STATUSES, type JobStatus, type JobsPort } from '../../ports/jobs.ts';
import type { TrainingRun } from '../schemas.ts';
import { policyJobName } from './run-names.ts';

const LIVE_STATUSES: readonly JobStatus[] = ['SUBMITTED', 'PENDING', 'RUNNABLE', 'STARTING', 'RUNNING'];

/** Ids of the run's jobs that have not ended. */
export async function liveRunJobs(jobs: JobsPort, run: Pick<TrainingRun, 'runId' | 'jobId'>): Promise<string[]> {
  const name = policyJobName(run.runId);
  const ids = new Set<string>();
  for (const status of LIVE_STATUSES) {
    for (const job of await jobs.list({ category: 'training', status })) if (job.name === name) ids.add(job.jobId);
  }
  if (run.jobId) {
    const job = await jobs.describe(run.jobId).catch(() => undefined);
    if (job && !TERMINAL_JOB_STATUSES.includes(job.status)) ids.add(job.jobId);
  }
  return [...ids];
}

/** Cancels the run's jobs that have not ended; their ids. */
export async function cancelRunJobs(jobs: JobsPort, run: Pick<TrainingRun, 'runId' | 'jobId'>, reason: string): Promise<string[]> {
  const ids = await liveRunJobs(jobs, run);
  for (const id of ids) await jobs.cancel(id, reason);
  return ids;
}
