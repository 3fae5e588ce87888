/**
 * Jobs as compute accounting saw them, newest first, optionally of one status, category and run: name, category, run,
 * status, times, GPUs and vCPUs, and the cost once ended.
 *
 * @example
 * const { jobs, nextCursor } = await listJobs(ports.records, { status: 'RUNNING', limit: 50 });
 */
import type { RecordsPort } from '../../ports/records.ts';
import { jobUsageRecord } from '../record-codecs.ts';
import { computeKeys } from '../record-keys.ts';
import type { JobsPage, JobUsageRecord, JobView, ListJobsQuery } from '../schemas.ts';

/** Pages read for one answer when a filter matches few jobs (the cursor goes on from where it stopped). */
const MAX_PAGES = 20;

export async function listJobs(records: RecordsPort, query: Partial<ListJobsQuery> = {}): Promise<JobsPage> {
  const limit = query.limit ?? 50;
  const jobs: JobView[] = [];
  let cursor = query.cursor;
  for (let page = 0; page < MAX_PAGES && jobs.length < limit; page++) {
    // Never more than what is still wanted: the cursor then lies right after the last job answered.
    const answer = await records.query({ index: 'gsi1', partition: computeKeys.allJobs, descending: true, limit: limit - jobs.length, ...(cursor ? { cursor } : {}) });
    for (const item of answer.items) {
      const job = jobUsageRecord.decode(item);
      if (query.status && job.status !== query.status) continue;
      if (query.category && job.category !== query.category) continue;
      if (query.run && job.runId !== query.run) continue;
      jobs.push(jobView(job));
    }
    cursor = answer.cursor;
    if (!cursor) break;
  }
  return { jobs, ...(cursor ? { nextCursor: cursor } : {}) };
}

function jobView(job: JobUsageRecord): JobView {
  return {
    jobId: job.jobId,
    name: job.name,
    category: job.category,
    status: job.status,
    ...(job.runId ? { runId: job.runId } : {}),
    ...(job.queue ? { queue: job.queue } : {}),
    createdAt: job.createdAt,
    ...(job.startedAt !== undefined ? { startedAt: job.startedAt } : {}),
    ...(job.stoppedAt !== undefined ? { stoppedAt: job.stoppedAt } : {}),
    gpus: job.gpus,
    vcpus: job.vcpus,
    ...(job.costUsd !== undefined ? { costUsd: job.costUsd } : {}),
  };
}
