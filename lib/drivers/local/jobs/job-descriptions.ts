/**
 * What the jobs port answers about a stored job: its row turned into the port's `JobDescription` (with an array's
 * status summary) or `JobChild`, in DescribeJobs' terms.
 */
import type { JobChild, JobDescription } from '../../../ports/jobs.ts';
import type { JobRow, StatusCount } from './job-rows.ts';

/** The port's description of `row`; `childCounts` (its children by status) for an array parent. */
export function describeJob(row: JobRow, childCounts: () => StatusCount[]): JobDescription {
  const description: JobDescription = {
    jobId: row.job_id,
    name: row.name,
    definition: row.definition,
    category: row.category,
    pool: row.pool,
    status: row.status,
    createdAt: row.created_at,
    ...(row.status_reason ? { statusReason: row.status_reason } : {}),
    ...(row.exit_code !== null ? { exitCode: row.exit_code } : {}),
    ...(row.started_at !== null ? { startedAt: row.started_at } : {}),
    ...(row.stopped_at !== null ? { stoppedAt: row.stopped_at } : {}),
    ...(row.spec.environment ? { environment: row.spec.environment } : {}),
  };
  if (row.array_size !== null) {
    description.arraySize = row.array_size;
    description.arrayStatusSummary = Object.fromEntries(childCounts().map((c) => [c.status, c.n]));
  } else {
    description.attempts = row.attempts;
  }
  return description;
}

/** One child of an array job, as `children()` lists it. */
export function describeChild(row: JobRow): JobChild {
  return {
    index: row.array_index ?? 0,
    status: row.status,
    ...(row.exit_code !== null ? { exitCode: row.exit_code } : {}),
    ...(row.status_reason ? { statusReason: row.status_reason } : {}),
  };
}
