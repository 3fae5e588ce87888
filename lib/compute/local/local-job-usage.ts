/**
 * Compute accounting inside `npm start`, the local twin of the EventBridge rule on Batch job state changes
 * (`lib/compute/infra/job-usage-events.ts`): a watch over the local jobs driver hands every job's (and every array
 * child's) new status to the same use case, `recordJobStateChange`. It polls the jobs port (the CLI submits and
 * cancels from other processes, so the driver's transitions are seen in its store, not in this process): a status
 * not seen before by this watch is recorded; the use case is idempotent on (jobId, status), so a restart that sees
 * everything again changes nothing. A change that fails is tried again on the next poll.
 *
 * @example
 * const usage = startLocalJobUsage({ ports: localPorts, jobs: local.jobs, logger });
 * await usage.poll(); // tests: see the jobs now
 * await usage.close();
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { TERMINAL_JOB_STATUSES, type JobDescription, type JobsPort, type JobStatus } from '../../ports/jobs.ts';
import type { Ports } from '../../ports/ports.ts';
import { jobUsageRecord } from '../record-codecs.ts';
import { computeKeys } from '../record-keys.ts';
import { jobStateChangeFromLocalJob } from '../usage/job-state-change.ts';
import { recordJobStateChange } from '../usage/record-job-state-change.ts';

export interface LocalJobUsageOptions {
  ports: Pick<Ports, 'records' | 'now'> & Partial<Pick<Ports, 'events'>>;
  jobs: JobsPort;
  logger?: Logger;
  /** Default 1000. */
  pollMs?: number;
}

export interface LocalJobUsage {
  /** Reads the jobs now and records what changed (waits for a poll in progress first). */
  poll(): Promise<void>;
  close(): Promise<void>;
}

export function startLocalJobUsage(options: LocalJobUsageOptions): LocalJobUsage {
  const { ports, jobs, logger } = options;
  const pollMs = options.pollMs ?? 1000;
  /** The last status recorded per job id (array children included). */
  const recorded = new Map<string, JobStatus>();
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  const record = async (job: JobDescription) => {
    if (recorded.get(job.jobId) === job.status) return;
    try {
      await recordJobStateChange(ports, jobStateChangeFromLocalJob(job));
      recorded.set(job.jobId, job.status);
    } catch (error) {
      logger?.error('compute usage: recording a local job state change failed (tried again on the next poll)', { jobId: job.jobId, status: job.status, error });
    }
  };

  const isEnded = (jobId: string) => TERMINAL_JOB_STATUSES.includes(recorded.get(jobId) ?? 'SUBMITTED');

  /** Whether accounting has this job ended already (so, for an array, its children too: they are recorded first). */
  const endedInAccounting = async (job: JobDescription) => {
    const key = computeKeys.job(job.jobId);
    const stored = jobUsageRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
    return stored !== undefined && stored.status === job.status && TERMINAL_JOB_STATUSES.includes(stored.status);
  };

  const once = async () => {
    for (const job of await jobs.list({})) {
      const before = recorded.get(job.jobId);
      // A running array stays RUNNING while its children change: it is looked at until it ends.
      if (before === job.status && (job.arraySize === undefined || TERMINAL_JOB_STATUSES.includes(job.status))) continue;
      // An array's children first (while it runs, and once more when it ends), then the array: after a restart, an
      // array that accounting has ended needs no look at its children.
      if (job.arraySize !== undefined) {
        if (before === undefined && TERMINAL_JOB_STATUSES.includes(job.status) && (await endedInAccounting(job))) {
          recorded.set(job.jobId, job.status);
          continue;
        }
        let childrenEnded = true;
        for (let index = 0; index < job.arraySize; index++) {
          const childId = `${job.jobId}:${index}`;
          if (!isEnded(childId)) await record(await jobs.describe(childId));
          childrenEnded &&= isEnded(childId);
        }
        // An ended array is recorded once every child's end is: a child that failed to record is tried next poll.
        if (TERMINAL_JOB_STATUSES.includes(job.status) && !childrenEnded) continue;
      }
      await record(job);
    }
  };

  const poll = () => {
    running = running.then(() => (closed ? undefined : once().catch((error: unknown) => logger?.error('compute usage: reading local jobs failed', { error }))));
    return running;
  };

  const schedule = () => {
    if (closed) return;
    timer = setTimeout(() => void poll().then(schedule), pollMs);
    timer.unref();
  };
  void poll().then(schedule);

  return {
    poll,
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
