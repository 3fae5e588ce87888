/**
 * The job store: every read and write of the `jobs` table of `jobs.sqlite` (WAL, so the CLI in another process reads,
 * submits and cancels while the runtime runs jobs). It knows rows and status changes, not processes: the runner,
 * the scheduler and crash recovery decide which change to make, and this file makes it.
 *
 * @example
 * const store = new JobStore(join(dataDir, 'jobs.sqlite'));
 * const jobId = store.insert(submission, Date.now());
 * store.get(jobId).status; // 'RUNNABLE'
 */
import { randomUUID } from 'node:crypto';
import type { DatabaseSync } from 'node:sqlite';
import { z } from 'zod';
import { JobNotFoundError } from '../../../ports/job-errors.ts';
import { COMPUTE_CATEGORIES, type ComputeCategory, type ComputePool, type JobStatus, type JobSubmission } from '../../../ports/jobs.ts';
import { inTransaction, openDatabase, StatementCache } from '../sqlite-database.ts';
import { defineRowCodec } from '../sqlite-rows.ts';
import { JOBS_DDL, LEAF, jobRow, statusCountRow, type JobRow, type StatusCount, type StoredSpec } from './job-rows.ts';

const jobIdRow = defineRowCodec('jobs', { job_id: z.string() });
const cancelReasonRow = defineRowCodec('jobs', { cancel_reason: z.string().nullable() });
const categoryRow = defineRowCodec('jobs', { category: z.enum(COMPUTE_CATEGORIES) });

/** How an attempt ended, as the runner decided it (`attempt-outcome.ts`). */
export interface AttemptEnd {
  status: JobStatus;
  reason: string | null;
  exitCode: number | null;
}

export interface JobListFilter {
  category?: ComputeCategory;
  status?: JobStatus;
  pool?: ComputePool;
}

export class JobStore {
  /** The connection, shared with the runner lease (its table lives in the same file). */
  readonly db: DatabaseSync;
  readonly #sql: StatementCache;
  readonly #now: () => number;

  constructor(path: string, now: () => number = Date.now) {
    this.db = openDatabase(path);
    this.db.exec(JOBS_DDL);
    this.#sql = new StatementCache(this.db);
    this.#now = now;
  }

  /** Runs `work` in one write transaction. */
  transaction<T>(work: () => T): T {
    return inTransaction(this.db, work);
  }

  close(): void {
    this.db.close();
  }

  // ---- reads ----

  find(jobId: string): JobRow | undefined {
    return jobRow.decodeIfPresent(this.#sql.get('SELECT * FROM jobs WHERE job_id = ?').get(jobId));
  }

  /** The row of `jobId`; throws `Flywheel.JobNotFound` when there is none. */
  get(jobId: string): JobRow {
    const row = this.find(jobId);
    if (!row) throw new JobNotFoundError(jobId);
    return row;
  }

  /** The children of an array job, by index. */
  children(parentId: string): JobRow[] {
    return jobRow.decodeAll(this.#sql.get('SELECT * FROM jobs WHERE parent_id = ? ORDER BY array_index').all(parentId));
  }

  statusCounts(parentId: string): StatusCount[] {
    return statusCountRow.decodeAll(this.#sql.get('SELECT status, COUNT(*) AS n FROM jobs WHERE parent_id = ? GROUP BY status').all(parentId));
  }

  /** Top-level jobs (singles and array parents), newest first, at most 1000. */
  list(filter: JobListFilter): JobRow[] {
    const where = ['parent_id IS NULL'];
    const params: string[] = [];
    if (filter.category) {
      where.push('category = ?');
      params.push(filter.category);
    }
    if (filter.status) {
      where.push('status = ?');
      params.push(filter.status);
    }
    if (filter.pool) {
      where.push('pool = ?');
      params.push(filter.pool);
    }
    return jobRow.decodeAll(this.#sql.get(`SELECT * FROM jobs WHERE ${where.join(' AND ')} ORDER BY created_at DESC, rowid DESC LIMIT 1000`).all(...params));
  }

  /** The reason a cancel asked for, or null; undefined when the job does not exist. */
  cancelReason(jobId: string): string | null | undefined {
    return cancelReasonRow.decodeIfPresent(this.#sql.get('SELECT cancel_reason FROM jobs WHERE job_id = ?').get(jobId))?.cancel_reason;
  }

  /** Leaves left STARTING or RUNNING (by a runner that is gone, when none is live). */
  unfinishedLeaves(): JobRow[] {
    return jobRow.decodeAll(this.#sql.get(`SELECT * FROM jobs WHERE ${LEAF} AND status IN ('STARTING', 'RUNNING')`).all());
  }

  /** Leaves RUNNABLE since before `before` in one of `pools`. */
  runnableSince(pools: readonly ComputePool[], before: number): JobRow[] {
    if (pools.length === 0) return [];
    const sql = `SELECT * FROM jobs WHERE ${LEAF} AND status = 'RUNNABLE' AND runnable_at < ? AND pool IN (${pools.map(() => '?').join(', ')})`;
    return jobRow.decodeAll(this.#sql.get(sql).all(before, ...pools));
  }

  /** Categories with a RUNNABLE leaf in `pool`. */
  waitingCategories(pool: ComputePool): Set<ComputeCategory> {
    const rows = categoryRow.decodeAll(this.#sql.get(`SELECT DISTINCT category FROM jobs WHERE ${LEAF} AND pool = ? AND status = 'RUNNABLE'`).all(pool));
    return new Set(rows.map((row) => row.category));
  }

  /** The RUNNABLE leaf of `pool` and `category` to start next: higher priority first, then submission order. */
  nextRunnable(pool: ComputePool, category: ComputeCategory): JobRow | undefined {
    const sql = `SELECT * FROM jobs WHERE ${LEAF} AND pool = ? AND category = ? AND status = 'RUNNABLE' ORDER BY priority DESC, rowid LIMIT 1`;
    return jobRow.decodeIfPresent(this.#sql.get(sql).get(pool, category));
  }

  // ---- writes ----

  /** Stores a submission (and its children, for an array of 2 or more); a known idempotency token returns its job. */
  insert(submission: JobSubmission, spec: StoredSpec, now: number): string {
    const arraySize = submission.arraySize && submission.arraySize >= 2 ? submission.arraySize : null;
    return this.transaction(() => {
      if (submission.idempotencyToken !== undefined) {
        const existing = jobIdRow.decodeIfPresent(this.#sql.get('SELECT job_id FROM jobs WHERE idempotency_token = ?').get(submission.idempotencyToken));
        if (existing) return existing.job_id;
      }
      const id = randomUUID();
      const insert = this.#sql.get(
        `INSERT INTO jobs (job_id, parent_id, array_index, array_size, name, definition, category, pool, spec, priority, status, max_attempts, created_at, runnable_at, idempotency_token)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'RUNNABLE', ?, ?, ?, ?)`,
      );
      const common = [submission.name, submission.definition, submission.category, submission.pool, JSON.stringify(spec), submission.schedulingPriority ?? 0] as const;
      const maxAttempts = (submission.retries ?? 0) + 1;
      insert.run(id, null, null, arraySize, ...common, maxAttempts, now, now, submission.idempotencyToken ?? null);
      for (let i = 0; i < (arraySize ?? 0); i++) insert.run(`${id}:${i}`, id, i, null, ...common, maxAttempts, now, now, null);
      return id;
    });
  }

  /** RUNNABLE → STARTING, counting the attempt; false when another claim (or a cancel) came first. */
  claim(jobId: string, now: number): boolean {
    const result = this.#sql
      .get("UPDATE jobs SET status = 'STARTING', status_reason = NULL, attempts = attempts + 1, started_at = COALESCE(started_at, ?) WHERE job_id = ? AND status = 'RUNNABLE'")
      .run(now, jobId);
    return result.changes === 1;
  }

  markRunning(jobId: string, pid: number): void {
    this.#sql.get("UPDATE jobs SET status = 'RUNNING', pid = ? WHERE job_id = ? AND status = 'STARTING'").run(pid, jobId);
  }

  /** Asks the runner to stop a running leaf (it fails with `reason` when its process ends). */
  requestCancel(jobId: string, reason: string): void {
    this.#sql.get('UPDATE jobs SET cancel_reason = ? WHERE job_id = ?').run(reason, jobId);
  }

  /** Keeps the first reason an array parent was cancelled with. */
  markArrayCancelled(parentId: string, reason: string): void {
    this.#sql.get('UPDATE jobs SET cancel_reason = ? WHERE job_id = ? AND cancel_reason IS NULL').run(reason, parentId);
  }

  fail(jobId: string, reason: string, now: number): void {
    this.#sql.get("UPDATE jobs SET status = 'FAILED', status_reason = ?, stopped_at = ?, pid = NULL WHERE job_id = ?").run(reason, now, jobId);
  }

  /** Fails a leaf still RUNNABLE (not one a runner claimed meanwhile). */
  failRunnable(jobId: string, reason: string, now: number): void {
    this.#sql.get("UPDATE jobs SET status = 'FAILED', status_reason = ?, stopped_at = ? WHERE job_id = ? AND status = 'RUNNABLE'").run(reason, now, jobId);
  }

  /** Back to RUNNABLE with its attempt counted (a runner died under it). */
  retry(jobId: string, reason: string, now: number): void {
    this.#sql.get("UPDATE jobs SET status = 'RUNNABLE', status_reason = ?, pid = NULL, runnable_at = ? WHERE job_id = ?").run(reason, now, jobId);
  }

  /** Back to RUNNABLE without counting the attempt: the runtime stopped, the job did not fail. */
  requeueStopped(jobId: string, now: number): void {
    this.#sql
      .get("UPDATE jobs SET status = 'RUNNABLE', status_reason = 'requeued: the runtime stopped', attempts = MAX(attempts - 1, 0), pid = NULL, runnable_at = ? WHERE job_id = ? AND status IN ('STARTING', 'RUNNING')")
      .run(now, jobId);
  }

  /** Records the end of an attempt; a retry is RUNNABLE again from `now`, any other end stops at `now`. */
  endAttempt(row: JobRow, end: AttemptEnd, now: number): void {
    const retrying = end.status === 'RUNNABLE';
    this.#sql
      .get('UPDATE jobs SET status = ?, status_reason = ?, exit_code = ?, pid = NULL, stopped_at = ?, runnable_at = ? WHERE job_id = ?')
      .run(end.status, end.reason, end.exitCode, retrying ? null : now, retrying ? now : row.runnable_at, row.job_id);
  }

  /** An array parent's status follows its children, as on Batch: RUNNING once one starts, FAILED if any failed. */
  refreshParent(parentId: string): void {
    const counts = this.statusCounts(parentId);
    const by = (s: JobStatus) => counts.find((c) => c.status === s)?.n ?? 0;
    const total = counts.reduce((a, c) => a + c.n, 0);
    const done = by('SUCCEEDED') + by('FAILED');
    const now = this.#now();
    let status: JobStatus;
    let reason: string | null = null;
    if (done === total) {
      status = by('FAILED') > 0 ? 'FAILED' : 'SUCCEEDED';
      if (status === 'FAILED') reason = `${by('FAILED')} of ${total} child jobs failed`;
    } else if (by('RUNNING') + by('STARTING') > 0 || done > 0) {
      status = 'RUNNING';
    } else {
      status = 'RUNNABLE';
    }
    const cancelled = this.cancelReason(parentId);
    if (status === 'FAILED' && cancelled) reason = cancelled;
    this.#sql
      .get(
        `UPDATE jobs SET status = ?, status_reason = ?,
           started_at = CASE WHEN started_at IS NULL AND ? != 'RUNNABLE' THEN ? ELSE started_at END,
           stopped_at = CASE WHEN ? IN ('SUCCEEDED', 'FAILED') THEN COALESCE(stopped_at, ?) ELSE NULL END
         WHERE job_id = ?`,
      )
      .run(status, reason, status, now, status, now, parentId);
  }
}
