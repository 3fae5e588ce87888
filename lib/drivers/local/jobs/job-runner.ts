/**
 * The runner: the loop of the one process that runs a data folder's jobs. It starts what the scheduler claims,
 * stops what a cancel asks for (from this process or, seen by polling, from the CLI), records each attempt's end,
 * and on close kills its running jobs and puts them back to RUNNABLE without counting the attempt (the runtime
 * stopped, the job did not fail).
 *
 * @example
 * lease.claim();
 * recoverOrphanedJobs(store, Date.now());
 * const runner = new JobRunner(store, scheduler, { ...context, pollMs: 250 });
 * …
 * await runner.close();
 */
import type { ComputePool } from '../../../ports/jobs.ts';
import { attemptEnd, startAttempt, type AttemptContext, type ProcessOutcome } from './job-attempt.ts';
import type { JobRow } from './job-rows.ts';
import type { JobScheduler } from './job-scheduler.ts';
import type { JobStore } from './job-store.ts';
import type { ProcessGroup } from './process-group.ts';

export interface JobRunnerOptions extends AttemptContext {
  /** How often to look for jobs submitted or cancelled by other processes, and RUNNABLE time limits. */
  pollMs: number;
}

/** A job this runner started and whose process has not ended yet. */
interface RunningAttempt {
  row: JobRow;
  group?: ProcessGroup;
  cancelReason?: string;
}

export class JobRunner {
  readonly #store: JobStore;
  readonly #scheduler: JobScheduler;
  readonly #context: AttemptContext;
  readonly #active = new Map<string, RunningAttempt>();
  readonly #exits = new Set<Promise<void>>();
  readonly #timer: NodeJS.Timeout;
  #closed = false;

  constructor(store: JobStore, scheduler: JobScheduler, options: JobRunnerOptions) {
    this.#store = store;
    this.#scheduler = scheduler;
    this.#context = options;
    this.#timer = setInterval(() => this.#tick(), options.pollMs);
    this.#timer.unref();
    this.wake();
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Jobs this runner has running now, per pool. */
  running(): Record<ComputePool, number> {
    const counts: Record<ComputePool, number> = { gpu: 0, cpu: 0 };
    for (const active of this.#active.values()) counts[active.row.pool]++;
    return counts;
  }

  /** Looks for jobs to start on the next turn of the event loop (after a submit, a cancel, an end). */
  wake(): void {
    setImmediate(() => this.#pump());
  }

  /** Stops a job this runner runs (SIGTERM to its tree, SIGKILL after the grace time); it fails with `reason`. */
  stop(jobId: string, reason: string): void {
    const active = this.#active.get(jobId);
    if (active) this.#stop(active, reason);
  }

  /** Kills every running job's tree and requeues them, then waits for their processes to end. */
  async close(): Promise<void> {
    if (this.#closed) return;
    clearInterval(this.#timer);
    const now = this.#context.now();
    const stopping = [...this.#active.values()];
    for (const active of stopping) active.group?.kill();
    if (stopping.length > 0) {
      this.#store.transaction(() => {
        for (const active of stopping) {
          this.#store.requeueStopped(active.row.job_id, now);
          if (active.row.parent_id !== null) this.#store.refreshParent(active.row.parent_id);
        }
      });
    }
    this.#closed = true;
    await Promise.allSettled([...this.#exits]);
  }

  #tick(): void {
    if (this.#closed) return;
    this.#scheduler.failUnplaceable(this.#context.now());
    // Cancels asked by another process (the CLI).
    for (const active of this.#active.values()) {
      if (active.group?.stopping) continue;
      const reason = this.#store.cancelReason(active.row.job_id);
      if (reason) this.#stop(active, reason);
    }
    this.#pump();
  }

  #pump(): void {
    if (this.#closed) return;
    for (const row of this.#scheduler.claimNext(this.running(), this.#context.now)) this.#start(row);
  }

  #start(row: JobRow): void {
    const active: RunningAttempt = { row };
    this.#active.set(row.job_id, active);
    const started = startAttempt(row, this.#context);
    if ('cannotStart' in started) {
      this.#finish(active, { reason: started.cannotStart, timedOut: false });
      return;
    }
    const { group } = started;
    active.group = group;
    group.onSpawn((pid) => {
      if (this.#closed) return;
      this.#store.markRunning(row.job_id, pid);
      if (row.spec.timeoutSeconds) group.limitTime(row.spec.timeoutSeconds * 1000);
      // A cancel that came between the claim and the spawn.
      const pending = this.#store.cancelReason(row.job_id);
      if (pending) this.#stop(active, pending);
    });
    const exited = group.ended.then((end) =>
      this.#finish(active, 'spawnError' in end ? { reason: `CannotStartContainerError: ${end.spawnError.message}`, timedOut: end.timedOut } : end),
    );
    this.#exits.add(exited);
    void exited.finally(() => this.#exits.delete(exited));
  }

  #stop(active: RunningAttempt, reason: string): void {
    active.cancelReason = reason;
    active.group?.terminate();
  }

  /** Records the end of an attempt: success, a retry, or failure (cancelled, timed out, exited non-zero). */
  #finish(active: RunningAttempt, outcome: ProcessOutcome): void {
    this.#active.delete(active.row.job_id);
    if (this.#closed) return;
    const now = this.#context.now();
    const { row } = active;
    this.#store.transaction(() => {
      const current = this.#store.get(row.job_id);
      if (current.status !== 'STARTING' && current.status !== 'RUNNING') return;
      this.#store.endAttempt(current, attemptEnd(current, active.cancelReason, outcome), now);
      if (row.parent_id !== null) this.#store.refreshParent(row.parent_id);
    });
    this.wake();
  }
}
