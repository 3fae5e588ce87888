/**
 * Local jobs driver: the jobs port for the local runtime. Every job (every child of an array job) is a child
 * process of the runtime, started by a weighted fair-share scheduler over the five compute categories with a cap on
 * jobs at once per pool: the local counterpart of one Batch fair-share job queue per pool. This file puts the parts
 * together and answers the port; each part does one job:
 *
 * - `jobs/job-store.ts`: the `jobs` table of `jobs.sqlite` (state survives restarts; the CLI in another process
 *   reads, submits and cancels while the runtime runs jobs), rows decoded by `jobs/job-rows.ts`.
 * - `jobs/job-scheduler.ts`: which RUNNABLE jobs start when slots free, and the RUNNABLE time limit.
 * - `jobs/job-runner.ts` and `jobs/job-attempt.ts`: the runner's loop, and one attempt of a job with Batch's
 *   variables, retries and timeouts; `jobs/process-group.ts` supervises its process tree.
 * - `jobs/runner-lease.ts`: only an instance opened with `run: true` starts processes, one per data folder.
 * - `jobs/crash-recovery.ts`: after a crash, the next runner kills what is left and retries or fails those jobs.
 * - `jobs/job-logs.ts`: `job-logs/<jobId>.log`, one timestamped line per output line.
 *
 * @example
 * const jobs = new LocalJobs({ dataDir: '.flywheel', definitions: { rollout: { command: ['node', 'batch-images/rollout/entrypoint.ts'] } } });
 * const { jobId } = await jobs.submit({ name: 'eval-s1', definition: 'rollout', category: 'evaluation', pool: 'gpu', arraySize: 2 });
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ValidationError } from '../../errors.ts';
import { validateJobSubmission } from '../../compute/validate-job-submission.ts';
import {
  TERMINAL_JOB_STATUSES,
  type ComputeCategory,
  type ComputePool,
  type JobChild,
  type JobDescription,
  type JobLogLine,
  type JobStatus,
  type JobSubmission,
  type JobsPort,
} from '../../ports/jobs.ts';
import { killLeftovers, recoverOrphanedJobs } from './jobs/crash-recovery.ts';
import { DEFAULT_LOCAL_JOB_DEFINITIONS, type LocalJobDefinition } from './jobs/job-definitions.ts';
import { describeChild, describeJob } from './jobs/job-descriptions.ts';
import { jobLogFile, readJobLog } from './jobs/job-logs.ts';
import type { JobRow } from './jobs/job-rows.ts';
import { JobRunner } from './jobs/job-runner.ts';
import { JobScheduler, type JobSchedulerOptions } from './jobs/job-scheduler.ts';
import { JobStore } from './jobs/job-store.ts';
import { RunnerLease } from './jobs/runner-lease.ts';

export interface LocalJobsOptions extends JobSchedulerOptions {
  /** Holds `jobs.sqlite` and `job-logs/`. */
  dataDir: string;
  definitions?: Record<string, LocalJobDefinition>;
  /** Start and supervise processes (the runtime). False: describe, list, logs, submit and cancel only (the CLI). Default true. */
  run?: boolean;
  /** Between SIGTERM and SIGKILL on timeout or cancel; default 5000. */
  killGraceMs?: number;
  /** How often the runner looks for jobs submitted or cancelled by other processes, and RUNNABLE time limits; default 250. */
  pollMs?: number;
  /** Base environment of every job; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  now?: () => number;
}

export class LocalJobs implements JobsPort {
  readonly dataDir: string;
  readonly logsDir: string;
  readonly #store: JobStore;
  readonly #lease: RunnerLease;
  readonly #definitions: Record<string, LocalJobDefinition>;
  readonly #now: () => number;
  /** Present when this instance runs the jobs (`run: true`). */
  readonly #runner: JobRunner | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: LocalJobsOptions) {
    this.dataDir = resolve(options.dataDir);
    this.logsDir = join(this.dataDir, 'job-logs');
    mkdirSync(this.logsDir, { recursive: true });
    this.#now = options.now ?? Date.now;
    this.#store = new JobStore(join(this.dataDir, 'jobs.sqlite'), this.#now);
    this.#lease = new RunnerLease(this.#store.db, this.dataDir, this.#now);
    this.#definitions = options.definitions ?? { ...DEFAULT_LOCAL_JOB_DEFINITIONS };
    const scheduler = new JobScheduler(this.#store, options);
    if (options.run ?? true) {
      this.#lease.claim();
      recoverOrphanedJobs(this.#store, this.#now());
      this.#runner = new JobRunner(this.#store, scheduler, {
        definitions: this.#definitions,
        dataDir: this.dataDir,
        logsDir: this.logsDir,
        env: options.env ?? process.env,
        killGraceMs: options.killGraceMs ?? 5000,
        now: this.#now,
        pollMs: options.pollMs ?? 250,
      });
    }
  }

  /** Definition names this driver can run. */
  get definitions(): string[] {
    return Object.keys(this.#definitions);
  }

  async submit(submission: JobSubmission): Promise<{ jobId: string }> {
    validateJobSubmission(submission, this.definitions);
    const spec = {
      ...(submission.command ? { command: submission.command } : {}),
      ...(submission.environment ? { environment: submission.environment } : {}),
      ...(submission.timeoutSeconds ? { timeoutSeconds: submission.timeoutSeconds } : {}),
    };
    const jobId = this.#store.insert(submission, spec, this.#now());
    this.#runner?.wake();
    return { jobId };
  }

  async describe(jobId: string): Promise<JobDescription> {
    return describeJob(this.#store.get(jobId), () => this.#store.statusCounts(jobId));
  }

  async children(jobId: string): Promise<JobChild[]> {
    const row = this.#store.get(jobId);
    if (row.array_size === null) return [];
    return this.#store.children(jobId).map(describeChild);
  }

  /**
   * Lines of the job's log file (all attempts, oldest first). `nextToken` is a byte offset after the last line
   * returned; it comes back whenever the job has a log, so a caller can follow a running job.
   */
  async logs(jobId: string, options: { arrayIndex?: number; nextToken?: string; limit?: number } = {}): Promise<{ lines: JobLogLine[]; nextToken?: string }> {
    const row = this.#store.get(jobId);
    let leafId = jobId;
    if (row.array_size !== null) {
      if (options.arrayIndex === undefined) throw new ValidationError(`job ${jobId} is an array job: pass arrayIndex (0–${row.array_size - 1}) for one child's log`, [{ path: 'arrayIndex', message: 'required for an array job' }]);
      leafId = `${jobId}:${options.arrayIndex}`;
      this.#store.get(leafId);
    } else if (options.arrayIndex !== undefined && row.parent_id === null) {
      throw new ValidationError(`job ${jobId} is not an array job: arrayIndex does not apply`, [{ path: 'arrayIndex', message: 'only for array jobs' }]);
    }
    return readJobLog(jobLogFile(this.logsDir, leafId), options);
  }

  /**
   * Stops a job (every unfinished child of an array job): RUNNABLE ones fail at once with `reason`; running ones
   * get SIGTERM (SIGKILL after the grace time) and fail with `reason` when they exit. Finished jobs stay as they are.
   */
  async cancel(jobId: string, reason: string): Promise<void> {
    const row = this.#store.get(jobId);
    const now = this.#now();
    const supervised = this.#runnerAlive();
    const toSignal: JobRow[] = [];
    this.#store.transaction(() => {
      const leaves = row.array_size === null ? [row] : this.#store.children(jobId);
      for (const leaf of leaves) {
        const current = this.#store.get(leaf.job_id);
        if (TERMINAL_JOB_STATUSES.includes(current.status)) continue;
        if (current.status === 'STARTING' || current.status === 'RUNNING') {
          if (supervised) {
            this.#store.requestCancel(current.job_id, reason);
            toSignal.push(current);
            continue;
          }
          // Nobody supervises it (the runtime is down): kill what is left and fail it here.
          killLeftovers(current);
        }
        this.#store.fail(current.job_id, reason, now);
      }
      if (row.parent_id !== null) this.#store.refreshParent(row.parent_id);
      if (row.array_size !== null) {
        this.#store.markArrayCancelled(jobId, reason);
        this.#store.refreshParent(jobId);
      }
    });
    for (const leaf of toSignal) this.#runner?.stop(leaf.job_id, reason);
    this.#runner?.wake();
  }

  async list(filter: { category?: ComputeCategory; status?: JobStatus; pool?: ComputePool } = {}): Promise<JobDescription[]> {
    return this.#store.list(filter).map((row) => describeJob(row, () => this.#store.statusCounts(row.job_id)));
  }

  /** Jobs this runner has running now, per pool. */
  running(): Record<ComputePool, number> {
    return this.#runner?.running() ?? { gpu: 0, cpu: 0 };
  }

  /**
   * Stops the runner: running jobs are killed (their whole process trees) and put back to RUNNABLE without
   * counting the attempt, to run again when a runtime opens this folder; then the database is closed.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#runner) {
        await this.#runner.close();
        this.#lease.release();
      }
      this.#store.close();
    })();
    return this.#closing;
  }

  #runnerAlive(): boolean {
    if (this.#runner && !this.#runner.closed) return true;
    return this.#lease.held();
  }
}
