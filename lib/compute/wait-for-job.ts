/**
 * Polls a job until it is SUCCEEDED or FAILED, on any JobsPort driver: what Step Functions' `submitJob.sync` does,
 * for the local runtime's Batch task handler and for CLIs.
 *
 * @example
 * const { jobId } = await jobs.submit(submission);
 * const done = await waitForJob(jobs, jobId, { timeoutMs: 3_600_000 });
 * if (done.status === 'FAILED') throw new Error(done.statusReason);
 */
import { TransientError } from '../errors.ts';
import { TERMINAL_JOB_STATUSES, type JobDescription, type JobsPort } from '../ports/jobs.ts';

export interface WaitForJobOptions {
  /** Between polls; default 1000 ms. */
  pollMs?: number;
  /** Give up (TransientError) after this long; default: wait forever. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export async function waitForJob(jobs: JobsPort, jobId: string, options: WaitForJobOptions = {}): Promise<JobDescription> {
  const pollMs = options.pollMs ?? 1000;
  const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
  for (;;) {
    options.signal?.throwIfAborted();
    const job = await jobs.describe(jobId);
    if (TERMINAL_JOB_STATUSES.includes(job.status)) return job;
    if (Date.now() + pollMs > deadline) throw new TransientError(`job ${jobId} still ${job.status} after ${options.timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
