/**
 * Crash recovery: what happens to jobs whose runner died. Leaves it left STARTING or RUNNING have their leftover
 * process tree killed (only when the pid still leads a group carrying the job's id, never a reused pid), then are
 * retried while attempts remain, or failed. A cancel that finds no live runner uses the same kill.
 *
 * @example
 * lease.claim();
 * recoverOrphanedJobs(store, Date.now()); // before the new runner starts anything
 */
import type { JobRow } from './job-rows.ts';
import type { JobStore } from './job-store.ts';
import { jobIdVariable } from './job-attempt.ts';
import { isGroupLeaderWith, killProcessGroup } from './process-group.ts';

/** Batch's text for a job whose host went away. */
const CRASHED = 'The runtime stopped while the job ran';

/** Kills what is left of a leaf's process tree when nobody supervises it. */
export function killLeftovers(row: JobRow): void {
  if (row.pid !== null && isGroupLeaderWith(row.pid, jobIdVariable(row.job_id))) killProcessGroup(row.pid, 'SIGKILL');
}

/** Jobs left STARTING or RUNNING by a runtime that died: kill their leftovers, then retry or fail them. */
export function recoverOrphanedJobs(store: JobStore, now: number): void {
  store.transaction(() => {
    const parents = new Set<string>();
    for (const row of store.unfinishedLeaves()) {
      killLeftovers(row);
      if (row.cancel_reason === null && row.attempts < row.max_attempts) store.retry(row.job_id, `${CRASHED}; retrying`, now);
      else store.fail(row.job_id, row.cancel_reason ?? CRASHED, now);
      if (row.parent_id !== null) parents.add(row.parent_id);
    }
    for (const parent of parents) store.refreshParent(parent);
  });
}
