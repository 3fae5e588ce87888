/**
 * Scheduling: which RUNNABLE jobs start when slots free, the local counterpart of one Batch fair-share job queue per
 * pool. Each pool runs at most `maxConcurrency` jobs at once; when a slot frees, stride scheduling
 * (`lib/compute/stride-scheduler.ts`) gives it to the waiting category with the lowest pass, so categories with work
 * waiting share slots in proportion to `computeShares`; inside a category, higher `schedulingPriority` first, then
 * submission order. A job RUNNABLE longer than `runnableTimeLimitSeconds` in a pool with no capacity here
 * (`maxConcurrency` 0, e.g. no GPU) is failed, as the job queue's time-limit action cancels a job no compute
 * environment can place; a job merely waiting its turn never is.
 *
 * @example
 * const scheduler = new JobScheduler(store, { maxConcurrency: { gpu: 0 } });
 * for (const row of scheduler.claimNext(runner.running(), Date.now)) start(row);
 */
import { STAGES, type ComputeShares } from '../../../config/stages.ts';
import { StrideScheduler } from '../../../compute/stride-scheduler.ts';
import { COMPUTE_POOLS, type ComputePool } from '../../../ports/jobs.ts';
import type { JobRow } from './job-rows.ts';
import type { JobStore } from './job-store.ts';

export interface JobSchedulerOptions {
  /** Default: the local stage's `computeShares`. */
  shares?: ComputeShares;
  /** Jobs at once per pool; default the local stage's `computePools.<pool>.localMaxConcurrency`. 0: the pool has no capacity here. */
  maxConcurrency?: Partial<Record<ComputePool, number>>;
  /** Default: the local stage's `runnableTimeLimitSeconds`; applies to pools with no capacity only. */
  runnableTimeLimitSeconds?: number;
}

/** Batch's text for the job queue's time-limit action, so logs and alerts read the same on both runtimes. */
function unplaceableReason(seconds: number): string {
  return `Job was RUNNABLE for more than ${seconds} s with no capacity in its pool: cancelled by the job queue's time-limit action`;
}

export class JobScheduler {
  readonly #store: JobStore;
  readonly #max: Record<ComputePool, number>;
  readonly #strides: Record<ComputePool, StrideScheduler>;
  readonly #runnableLimitSeconds: number;

  /** Throws RangeError for a `maxConcurrency` that is not an integer >= 0 or a share that is not positive. */
  constructor(store: JobStore, options: JobSchedulerOptions = {}) {
    const local = STAGES.local;
    this.#store = store;
    this.#max = {
      gpu: options.maxConcurrency?.gpu ?? local.computePools.gpu.localMaxConcurrency,
      cpu: options.maxConcurrency?.cpu ?? local.computePools.cpu.localMaxConcurrency,
    };
    for (const pool of COMPUTE_POOLS) {
      if (!Number.isInteger(this.#max[pool]) || this.#max[pool] < 0) throw new RangeError(`maxConcurrency.${pool} must be an integer >= 0 (got ${this.#max[pool]})`);
    }
    const shares = options.shares ?? local.computeShares;
    this.#strides = { gpu: new StrideScheduler(shares), cpu: new StrideScheduler(shares) };
    this.#runnableLimitSeconds = options.runnableTimeLimitSeconds ?? local.runnableTimeLimitSeconds;
  }

  /**
   * Claims the jobs to start now, filling every pool's free slots category by category in stride order; each row
   * returned is STARTING with its attempt counted, for the caller to start.
   */
  claimNext(running: Record<ComputePool, number>, now: () => number): JobRow[] {
    const claimed: JobRow[] = [];
    for (const pool of COMPUTE_POOLS) {
      let free = this.#max[pool] - running[pool];
      while (free > 0) {
        const category = this.#strides[pool].next(this.#store.waitingCategories(pool));
        if (!category) break;
        const row = this.#store.nextRunnable(pool, category);
        if (!row) continue;
        const at = now();
        const won = this.#store.transaction(() => {
          if (!this.#store.claim(row.job_id, at)) return false;
          if (row.parent_id !== null) this.#store.refreshParent(row.parent_id);
          return true;
        });
        if (!won) continue;
        free--;
        claimed.push({ ...row, status: 'STARTING', attempts: row.attempts + 1 });
      }
    }
    return claimed;
  }

  /**
   * The job queue's time-limit action. On Batch it cancels a job that no compute environment can place (capacity or
   * misconfiguration), not one waiting its turn; locally that is a pool with no slots at all.
   */
  failUnplaceable(now: number): void {
    const blockedPools = COMPUTE_POOLS.filter((pool) => this.#max[pool] === 0);
    const stale = this.#store.runnableSince(blockedPools, now - this.#runnableLimitSeconds * 1000);
    if (stale.length === 0) return;
    this.#store.transaction(() => {
      for (const row of stale) {
        this.#store.failRunnable(row.job_id, unplaceableReason(this.#runnableLimitSeconds), now);
        if (row.parent_id !== null) this.#store.refreshParent(row.parent_id);
      }
    });
  }
}
