/**
 * Local jobs driver: every job (every child of an array job) is a child process of the runtime, started by a
 * weighted fair-share scheduler over the five compute categories, with a cap on jobs at once per pool — the local
 * counterpart of one Batch fair-share job queue per pool.
 *
 * - **Scheduling.** Stride scheduling per pool (`lib/compute/stride-scheduler.ts`): when a slot frees, the waiting
 *   category with the lowest pass gets it, so categories with work waiting share slots in proportion to
 *   `computeShares`; inside a category, higher `schedulingPriority` first, then submission order.
 * - **Processes.** A job definition name maps to an entry point (`LocalJobDefinition`; `rollout` →
 *   `node batch-images/rollout/entrypoint.ts`, a leading `node` meaning this process's Node 24). The job's
 *   `command` is appended and its `environment` laid over the runtime's and `FLYWHEEL_DATA_DIR` (this data folder,
 *   so the job's ports are the runtime's, as a Batch job's are its stage's), with Batch's variables set as Batch sets
 *   them: `AWS_BATCH_JOB_ID` (`<parent>:<index>` for a child), `AWS_BATCH_JOB_ARRAY_INDEX`,
 *   `AWS_BATCH_JOB_ATTEMPT`, `AWS_BATCH_JQ_NAME`. Each runs in its own process group, so a timeout, a cancel or the
 *   end of the job kills the whole tree (SIGTERM, then SIGKILL after `killGraceMs`; stragglers get SIGKILL when
 *   the leader exits).
 * - **Retries and timeouts** follow Batch: a non-zero exit is retried while attempts remain; a timed-out or
 *   cancelled attempt is not retried. A job RUNNABLE longer than `runnableTimeLimitSeconds` in a pool with no
 *   capacity here (`maxConcurrency` 0, e.g. no GPU) is cancelled, as the job queue's time-limit action cancels a job
 *   no compute environment can place; a job merely waiting its turn is never cancelled.
 * - **State** lives in `jobs.sqlite` (WAL; see `sqlite-database.ts`), so a restart sees past jobs and picks up
 *   RUNNABLE ones, and the CLI in another process reads, submits and cancels while the runtime runs them. Logs go to
 *   `job-logs/<jobId>.log`, one line per output line, prefixed with its epoch-millisecond timestamp.
 * - **One runner per data folder.** Only an instance opened with `run: true` starts processes; a second live
 *   runner on the same folder is refused. Closing the runner kills its running jobs and puts them back to
 *   RUNNABLE (the attempt is not counted: the runtime stopped, the job did not fail); after a crash, the next
 *   runner kills what is left of them (checking the process still carries the job's id) and retries or fails them.
 *
 * @example
 * const jobs = new LocalJobs({ dataDir: '.flywheel', definitions: { rollout: { command: ['node', 'batch-images/rollout/entrypoint.ts'] } } });
 * const { jobId } = await jobs.submit({ name: 'eval-s1', definition: 'rollout', category: 'evaluation', pool: 'gpu', arraySize: 2 });
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, createWriteStream, existsSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, type WriteStream } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { join, resolve } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { STAGES, type ComputeShares } from '../../config/stages.ts';
import { FlywheelError, ValidationError } from '../../errors.ts';
import { StrideScheduler } from '../../compute/stride-scheduler.ts';
import { validateJobSubmission } from '../../compute/validate-job-submission.ts';
import {
  COMPUTE_POOLS,
  JOB_NOT_FOUND,
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
import { inTransaction, openDatabase, StatementCache } from './sqlite-database.ts';

/** How a job definition runs locally. */
export interface LocalJobDefinition {
  /** argv of the entry point; a leading `node` is this process's Node (24). The job's `command` is appended. */
  command: string[];
  /** Working directory; default the checkout's root. */
  cwd?: string;
  /** Laid over the runtime's environment, under the job's own `environment`. */
  environment?: Record<string, string>;
}

/** The checkout's root (entry points are relative to it). */
export const REPOSITORY_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The entry points the local runtime knows; `FLYWHEEL_LOCAL_JOB_DEFINITIONS` (JSON) adds or replaces some. */
export const DEFAULT_LOCAL_JOB_DEFINITIONS: Record<string, LocalJobDefinition> = {
  rollout: { command: ['node', 'batch-images/rollout/entrypoint.ts'] },
};

/**
 * `DEFAULT_LOCAL_JOB_DEFINITIONS` with `FLYWHEEL_LOCAL_JOB_DEFINITIONS` laid over it, a JSON object of
 * `{ "<name>": { "command": ["node", "x.ts"], "cwd"?: "...", "environment"?: {...} } }`.
 */
export function localJobDefinitionsFromEnv(env: Record<string, string | undefined> = process.env): Record<string, LocalJobDefinition> {
  const text = env['FLYWHEEL_LOCAL_JOB_DEFINITIONS'];
  if (!text) return { ...DEFAULT_LOCAL_JOB_DEFINITIONS };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ValidationError(`FLYWHEEL_LOCAL_JOB_DEFINITIONS is not JSON: ${(error as Error).message}`, [{ path: 'FLYWHEEL_LOCAL_JOB_DEFINITIONS', message: 'JSON object' }]);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ValidationError('FLYWHEEL_LOCAL_JOB_DEFINITIONS must be a JSON object of definitions', [{ path: 'FLYWHEEL_LOCAL_JOB_DEFINITIONS', message: 'JSON object' }]);
  const out: Record<string, LocalJobDefinition> = { ...DEFAULT_LOCAL_JOB_DEFINITIONS };
  for (const [name, value] of Object.entries(parsed as Record<string, unknown>)) {
    const command = (value as { command?: unknown } | null)?.command;
    if (!Array.isArray(command) || command.length === 0 || command.some((a) => typeof a !== 'string')) {
      throw new ValidationError(`FLYWHEEL_LOCAL_JOB_DEFINITIONS.${name}.command must be a non-empty array of strings`, [{ path: `FLYWHEEL_LOCAL_JOB_DEFINITIONS.${name}.command`, message: 'array of strings' }]);
    }
    out[name] = value as LocalJobDefinition;
  }
  return out;
}

export interface LocalJobsOptions {
  /** Holds `jobs.sqlite` and `job-logs/`. */
  dataDir: string;
  definitions?: Record<string, LocalJobDefinition>;
  /** Default: the local stage's `computeShares`. */
  shares?: ComputeShares;
  /** Jobs at once per pool; default the local stage's `computePools.<pool>.localMaxConcurrency`. 0: the pool has no capacity here (its jobs wait, then meet the RUNNABLE time limit). */
  maxConcurrency?: Partial<Record<ComputePool, number>>;
  /** Default: the local stage's `runnableTimeLimitSeconds`; applies to pools with no capacity (`maxConcurrency` 0), as Batch's action applies to jobs no compute environment can place. */
  runnableTimeLimitSeconds?: number;
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

interface JobRow {
  job_id: string;
  parent_id: string | null;
  array_index: number | null;
  array_size: number | null;
  name: string;
  definition: string;
  category: ComputeCategory;
  pool: ComputePool;
  spec: string;
  priority: number;
  status: JobStatus;
  status_reason: string | null;
  exit_code: number | null;
  attempts: number;
  max_attempts: number;
  created_at: number;
  runnable_at: number | null;
  started_at: number | null;
  stopped_at: number | null;
  pid: number | null;
  cancel_reason: string | null;
}

interface StoredSpec {
  command?: string[];
  environment?: Record<string, string>;
  timeoutSeconds?: number;
}

interface ActiveJob {
  row: JobRow;
  child?: ChildProcess;
  log?: WriteStream;
  timer?: NodeJS.Timeout;
  killTimer?: NodeJS.Timeout;
  timedOut: boolean;
  cancelReason?: string;
  killing: boolean;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS jobs (
  job_id TEXT PRIMARY KEY,
  parent_id TEXT,
  array_index INTEGER,
  array_size INTEGER,
  name TEXT NOT NULL,
  definition TEXT NOT NULL,
  category TEXT NOT NULL,
  pool TEXT NOT NULL,
  spec TEXT NOT NULL,
  priority INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL,
  status_reason TEXT,
  exit_code INTEGER,
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL,
  runnable_at INTEGER,
  started_at INTEGER,
  stopped_at INTEGER,
  pid INTEGER,
  cancel_reason TEXT,
  idempotency_token TEXT UNIQUE
);
CREATE INDEX IF NOT EXISTS jobs_runnable ON jobs (pool, status, category, priority);
CREATE INDEX IF NOT EXISTS jobs_parent ON jobs (parent_id, array_index);
CREATE INDEX IF NOT EXISTS jobs_created ON jobs (created_at);
CREATE TABLE IF NOT EXISTS job_runner (id INTEGER PRIMARY KEY CHECK (id = 1), pid INTEGER NOT NULL, started_at INTEGER NOT NULL);
`;

/** Batch's texts, so logs and alerts read the same on both runtimes. */
const REASONS = {
  exited: 'Essential container in task exited',
  timeout: 'Job attempt duration exceeded timeout',
  runnable: (s: number) => `Job was RUNNABLE for more than ${s} s with no capacity in its pool: cancelled by the job queue's time-limit action`,
  crashed: 'The runtime stopped while the job ran',
} as const;

const LEAF = 'array_size IS NULL';

function notFound(jobId: string): FlywheelError {
  return new FlywheelError(JOB_NOT_FOUND, `no job ${jobId}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True when `pid` leads its own process group and carries AWS_BATCH_JOB_ID=<jobId>: it is that job, not a reused pid. */
function isJobProcess(pid: number, jobId: string): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) !== pid) return false;
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`AWS_BATCH_JOB_ID=${jobId}`);
  } catch {
    return false;
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

export class LocalJobs implements JobsPort {
  readonly dataDir: string;
  readonly logsDir: string;
  readonly #db: DatabaseSync;
  readonly #sql: StatementCache;
  readonly #definitions: Record<string, LocalJobDefinition>;
  readonly #max: Record<ComputePool, number>;
  readonly #schedulers: Record<ComputePool, StrideScheduler>;
  readonly #runnableLimitSeconds: number;
  readonly #killGraceMs: number;
  readonly #env: NodeJS.ProcessEnv;
  readonly #now: () => number;
  readonly #runner: boolean;
  readonly #active = new Map<string, ActiveJob>();
  readonly #exits = new Set<Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: LocalJobsOptions) {
    this.dataDir = resolve(options.dataDir);
    this.logsDir = join(this.dataDir, 'job-logs');
    mkdirSync(this.logsDir, { recursive: true });
    this.#db = openDatabase(join(this.dataDir, 'jobs.sqlite'));
    this.#db.exec(SCHEMA);
    this.#sql = new StatementCache(this.#db);
    this.#definitions = options.definitions ?? { ...DEFAULT_LOCAL_JOB_DEFINITIONS };
    const local = STAGES.local;
    const shares = options.shares ?? local.computeShares;
    this.#max = { gpu: options.maxConcurrency?.gpu ?? local.computePools.gpu.localMaxConcurrency, cpu: options.maxConcurrency?.cpu ?? local.computePools.cpu.localMaxConcurrency };
    for (const pool of COMPUTE_POOLS) {
      if (!Number.isInteger(this.#max[pool]) || this.#max[pool] < 0) throw new RangeError(`maxConcurrency.${pool} must be an integer >= 0 (got ${this.#max[pool]})`);
    }
    this.#schedulers = { gpu: new StrideScheduler(shares), cpu: new StrideScheduler(shares) };
    this.#runnableLimitSeconds = options.runnableTimeLimitSeconds ?? local.runnableTimeLimitSeconds;
    this.#killGraceMs = options.killGraceMs ?? 5000;
    this.#env = options.env ?? process.env;
    this.#now = options.now ?? Date.now;
    this.#runner = options.run ?? true;
    if (this.#runner) {
      this.#claimRunner();
      this.#recover();
      this.#timer = setInterval(() => this.#tick(), options.pollMs ?? 250);
      this.#timer.unref();
      setImmediate(() => this.#pump());
    }
  }

  /** Definition names this driver can run. */
  get definitions(): string[] {
    return Object.keys(this.#definitions);
  }

  async submit(submission: JobSubmission): Promise<{ jobId: string }> {
    validateJobSubmission(submission, this.definitions);
    const now = this.#now();
    const arraySize = submission.arraySize && submission.arraySize >= 2 ? submission.arraySize : null;
    const spec: StoredSpec = {
      ...(submission.command ? { command: submission.command } : {}),
      ...(submission.environment ? { environment: submission.environment } : {}),
      ...(submission.timeoutSeconds ? { timeoutSeconds: submission.timeoutSeconds } : {}),
    };
    const jobId = inTransaction(this.#db, () => {
      if (submission.idempotencyToken !== undefined) {
        const existing = this.#sql.get('SELECT job_id FROM jobs WHERE idempotency_token = ?').get(submission.idempotencyToken) as { job_id: string } | undefined;
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
    if (this.#runner) setImmediate(() => this.#pump());
    return { jobId };
  }

  async describe(jobId: string): Promise<JobDescription> {
    const row = this.#row(jobId);
    return this.#description(row);
  }

  async children(jobId: string): Promise<JobChild[]> {
    const row = this.#row(jobId);
    if (row.array_size === null) return [];
    const rows = this.#sql.get('SELECT * FROM jobs WHERE parent_id = ? ORDER BY array_index').all(jobId) as unknown as JobRow[];
    return rows.map((r) => ({
      index: r.array_index!,
      status: r.status,
      ...(r.exit_code !== null ? { exitCode: r.exit_code } : {}),
      ...(r.status_reason ? { statusReason: r.status_reason } : {}),
    }));
  }

  /**
   * Lines of the job's log file (all attempts, oldest first). `nextToken` is a byte offset after the last line
   * returned; it comes back whenever the job has a log, so a caller can follow a running job.
   */
  async logs(jobId: string, options: { arrayIndex?: number; nextToken?: string; limit?: number } = {}): Promise<{ lines: JobLogLine[]; nextToken?: string }> {
    const row = this.#row(jobId);
    let leafId = jobId;
    if (row.array_size !== null) {
      if (options.arrayIndex === undefined) throw new ValidationError(`job ${jobId} is an array job: pass arrayIndex (0–${row.array_size - 1}) for one child's log`, [{ path: 'arrayIndex', message: 'required for an array job' }]);
      leafId = `${jobId}:${options.arrayIndex}`;
      this.#row(leafId);
    } else if (options.arrayIndex !== undefined && row.parent_id === null) {
      throw new ValidationError(`job ${jobId} is not an array job: arrayIndex does not apply`, [{ path: 'arrayIndex', message: 'only for array jobs' }]);
    }
    const file = this.#logFile(leafId);
    if (!existsSync(file)) return { lines: [] };
    const start = options.nextToken === undefined ? 0 : Number(options.nextToken);
    if (!Number.isInteger(start) || start < 0) throw new ValidationError(`bad nextToken "${options.nextToken}"`, [{ path: 'nextToken', message: 'a token from an earlier call' }]);
    const limit = Math.max(1, Math.min(options.limit ?? 10_000, 10_000));
    const fd = openSync(file, 'r');
    try {
      const size = fstatSync(fd).size;
      const length = Math.min(Math.max(0, size - start), 4 * 1024 * 1024);
      const buffer = Buffer.alloc(length);
      readSync(fd, buffer, 0, length, start);
      const lines: JobLogLine[] = [];
      let offset = 0;
      while (lines.length < limit) {
        const end = buffer.indexOf(10, offset);
        if (end < 0) break;
        const text = buffer.toString('utf8', offset, end);
        const space = text.indexOf(' ');
        lines.push({ timestamp: Number(text.slice(0, space)), message: text.slice(space + 1) });
        offset = end + 1;
      }
      return { lines, nextToken: String(start + offset) };
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Stops a job (every unfinished child of an array job): RUNNABLE ones fail at once with `reason`; running ones
   * get SIGTERM (SIGKILL after the grace time) and fail with `reason` when they exit. Finished jobs stay as they are.
   */
  async cancel(jobId: string, reason: string): Promise<void> {
    const row = this.#row(jobId);
    const now = this.#now();
    const runnerAlive = this.#runnerAlive();
    const toSignal: JobRow[] = [];
    inTransaction(this.#db, () => {
      const leaves = row.array_size === null ? [row] : (this.#sql.get('SELECT * FROM jobs WHERE parent_id = ?').all(jobId) as unknown as JobRow[]);
      for (const leaf of leaves) {
        const current = this.#sql.get('SELECT * FROM jobs WHERE job_id = ?').get(leaf.job_id) as unknown as JobRow;
        if (TERMINAL_JOB_STATUSES.includes(current.status)) continue;
        if (current.status === 'STARTING' || current.status === 'RUNNING') {
          if (runnerAlive) {
            this.#sql.get('UPDATE jobs SET cancel_reason = ? WHERE job_id = ?').run(reason, current.job_id);
            toSignal.push(current);
            continue;
          }
          // Nobody supervises it (the runtime is down): kill what is left and fail it here.
          if (current.pid !== null && isJobProcess(current.pid, current.job_id)) killGroup(current.pid, 'SIGKILL');
        }
        this.#sql.get("UPDATE jobs SET status = 'FAILED', status_reason = ?, stopped_at = ?, pid = NULL WHERE job_id = ?").run(reason, now, current.job_id);
      }
      if (row.parent_id !== null) this.#refreshParent(row.parent_id);
      if (row.array_size !== null) {
        this.#sql.get('UPDATE jobs SET cancel_reason = ? WHERE job_id = ? AND cancel_reason IS NULL').run(reason, jobId);
        this.#refreshParent(jobId);
      }
    });
    for (const leaf of toSignal) {
      const active = this.#active.get(leaf.job_id);
      if (active) this.#kill(active, { cancelReason: reason });
    }
    if (this.#runner) setImmediate(() => this.#pump());
  }

  async list(filter: { category?: ComputeCategory; status?: JobStatus; pool?: ComputePool } = {}): Promise<JobDescription[]> {
    const where = ['parent_id IS NULL'];
    const params: string[] = [];
    if (filter.category) (where.push('category = ?'), params.push(filter.category));
    if (filter.status) (where.push('status = ?'), params.push(filter.status));
    if (filter.pool) (where.push('pool = ?'), params.push(filter.pool));
    const rows = this.#sql.get(`SELECT * FROM jobs WHERE ${where.join(' AND ')} ORDER BY created_at DESC, rowid DESC LIMIT 1000`).all(...params) as unknown as JobRow[];
    return rows.map((r) => this.#description(r));
  }

  /** Jobs this runner has running now, per pool. */
  running(): Record<ComputePool, number> {
    const counts = { gpu: 0, cpu: 0 } as Record<ComputePool, number>;
    for (const active of this.#active.values()) counts[active.row.pool]++;
    return counts;
  }

  /**
   * Stops the runner: running jobs are killed (their whole process trees) and put back to RUNNABLE without
   * counting the attempt, to run again when a runtime opens this folder; then the database is closed.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    const now = this.#now();
    const stopping = [...this.#active.values()];
    for (const active of stopping) {
      active.killing = true;
      if (active.timer) clearTimeout(active.timer);
      if (active.child?.pid) killGroup(active.child.pid, 'SIGKILL');
    }
    if (stopping.length > 0) {
      inTransaction(this.#db, () => {
        for (const active of stopping) {
          this.#sql
            .get("UPDATE jobs SET status = 'RUNNABLE', status_reason = 'requeued: the runtime stopped', attempts = MAX(attempts - 1, 0), pid = NULL, runnable_at = ? WHERE job_id = ? AND status IN ('STARTING', 'RUNNING')")
            .run(now, active.row.job_id);
          if (active.row.parent_id !== null) this.#refreshParent(active.row.parent_id);
        }
      });
    }
    this.#closed = true;
    await Promise.allSettled([...this.#exits]);
    if (this.#runner) this.#sql.get('DELETE FROM job_runner WHERE pid = ?').run(process.pid);
    this.#db.close();
  }

  // ---- rows and descriptions ----

  #row(jobId: string): JobRow {
    const row = this.#sql.get('SELECT * FROM jobs WHERE job_id = ?').get(jobId) as unknown as JobRow | undefined;
    if (!row) throw notFound(jobId);
    return row;
  }

  #description(row: JobRow): JobDescription {
    const d: JobDescription = {
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
    };
    if (row.array_size !== null) {
      d.arraySize = row.array_size;
      const counts = this.#sql.get('SELECT status, COUNT(*) AS n FROM jobs WHERE parent_id = ? GROUP BY status').all(row.job_id) as Array<{ status: JobStatus; n: number }>;
      d.arrayStatusSummary = Object.fromEntries(counts.map((c) => [c.status, c.n]));
    } else {
      d.attempts = row.attempts;
    }
    return d;
  }

  /** An array parent's status follows its children, as on Batch: RUNNING once one starts, FAILED if any failed. */
  #refreshParent(parentId: string): void {
    const counts = this.#sql.get('SELECT status, COUNT(*) AS n FROM jobs WHERE parent_id = ? GROUP BY status').all(parentId) as Array<{ status: JobStatus; n: number }>;
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
    const cancelled = (this.#sql.get('SELECT cancel_reason FROM jobs WHERE job_id = ?').get(parentId) as { cancel_reason: string | null } | undefined)?.cancel_reason;
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

  #logFile(leafId: string): string {
    return join(this.logsDir, `${leafId.replace(/[^A-Za-z0-9:_-]/g, '_')}.log`);
  }

  // ---- the runner ----

  #claimRunner(): void {
    inTransaction(this.#db, () => {
      const current = this.#sql.get('SELECT pid FROM job_runner WHERE id = 1').get() as { pid: number } | undefined;
      if (current && current.pid !== process.pid && isAlive(current.pid)) {
        throw new FlywheelError('ConfigurationError', `another process (pid ${current.pid}) runs the jobs of ${this.dataDir}; open this one with run: false`);
      }
      this.#sql.get('INSERT INTO job_runner (id, pid, started_at) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET pid = excluded.pid, started_at = excluded.started_at').run(process.pid, this.#now());
    });
  }

  #runnerAlive(): boolean {
    if (this.#runner && !this.#closed) return true;
    const current = this.#sql.get('SELECT pid FROM job_runner WHERE id = 1').get() as { pid: number } | undefined;
    return current !== undefined && isAlive(current.pid);
  }

  /** Jobs left STARTING or RUNNING by a runtime that died: kill their leftovers, then retry or fail them. */
  #recover(): void {
    const now = this.#now();
    inTransaction(this.#db, () => {
      const orphans = this.#sql.get(`SELECT * FROM jobs WHERE ${LEAF} AND status IN ('STARTING', 'RUNNING')`).all() as unknown as JobRow[];
      const parents = new Set<string>();
      for (const row of orphans) {
        if (row.pid !== null && isJobProcess(row.pid, row.job_id)) killGroup(row.pid, 'SIGKILL');
        if (row.cancel_reason === null && row.attempts < row.max_attempts) {
          this.#sql.get("UPDATE jobs SET status = 'RUNNABLE', status_reason = ?, pid = NULL, runnable_at = ? WHERE job_id = ?").run(`${REASONS.crashed}; retrying`, now, row.job_id);
        } else {
          this.#sql.get("UPDATE jobs SET status = 'FAILED', status_reason = ?, pid = NULL, stopped_at = ? WHERE job_id = ?").run(row.cancel_reason ?? REASONS.crashed, now, row.job_id);
        }
        if (row.parent_id !== null) parents.add(row.parent_id);
      }
      for (const parent of parents) this.#refreshParent(parent);
    });
  }

  #tick(): void {
    if (this.#closed) return;
    const now = this.#now();
    // The job queue's time-limit action. On Batch it cancels a job that no compute environment can place
    // (capacity or misconfiguration), not one waiting its turn; locally that is a pool with no slots at all.
    const blockedPools = COMPUTE_POOLS.filter((pool) => this.#max[pool] === 0);
    const stale = blockedPools.length === 0 ? [] : (this.#sql
      .get(`SELECT * FROM jobs WHERE ${LEAF} AND status = 'RUNNABLE' AND runnable_at < ? AND pool IN (${blockedPools.map(() => '?').join(', ')})`)
      .all(now - this.#runnableLimitSeconds * 1000, ...blockedPools) as unknown as JobRow[]);
    if (stale.length > 0) {
      inTransaction(this.#db, () => {
        for (const row of stale) {
          this.#sql.get("UPDATE jobs SET status = 'FAILED', status_reason = ?, stopped_at = ? WHERE job_id = ? AND status = 'RUNNABLE'").run(REASONS.runnable(this.#runnableLimitSeconds), now, row.job_id);
          if (row.parent_id !== null) this.#refreshParent(row.parent_id);
        }
      });
    }
    // Cancels asked by another process (the CLI).
    for (const active of this.#active.values()) {
      if (active.killing) continue;
      const reason = (this.#sql.get('SELECT cancel_reason FROM jobs WHERE job_id = ?').get(active.row.job_id) as { cancel_reason: string | null } | undefined)?.cancel_reason;
      if (reason) this.#kill(active, { cancelReason: reason });
    }
    this.#pump();
  }

  /** Fills every pool's free slots, category by category in stride order. */
  #pump(): void {
    if (this.#closed || !this.#runner) return;
    for (const pool of COMPUTE_POOLS) {
      let free = this.#max[pool] - this.running()[pool];
      while (free > 0) {
        const waiting = this.#sql.get(`SELECT DISTINCT category FROM jobs WHERE ${LEAF} AND pool = ? AND status = 'RUNNABLE'`).all(pool) as Array<{ category: ComputeCategory }>;
        const category = this.#schedulers[pool].next(new Set(waiting.map((w) => w.category)));
        if (!category) break;
        const row = this.#sql.get(`SELECT * FROM jobs WHERE ${LEAF} AND pool = ? AND category = ? AND status = 'RUNNABLE' ORDER BY priority DESC, rowid LIMIT 1`).get(pool, category) as unknown as JobRow | undefined;
        if (!row) continue;
        const now = this.#now();
        const claimed = inTransaction(this.#db, () => {
          const result = this.#sql
            .get("UPDATE jobs SET status = 'STARTING', status_reason = NULL, attempts = attempts + 1, started_at = COALESCE(started_at, ?) WHERE job_id = ? AND status = 'RUNNABLE'")
            .run(now, row.job_id);
          if (result.changes !== 1) return false;
          if (row.parent_id !== null) this.#refreshParent(row.parent_id);
          return true;
        });
        if (!claimed) continue;
        free--;
        this.#start({ ...row, status: 'STARTING', attempts: row.attempts + 1 });
      }
    }
  }

  #start(row: JobRow): void {
    const active: ActiveJob = { row, timedOut: false, killing: false };
    this.#active.set(row.job_id, active);
    let settle!: () => void;
    const exited = new Promise<void>((r) => (settle = r));
    this.#exits.add(exited);
    void exited.then(() => this.#exits.delete(exited));

    const definition = this.#definitions[row.definition];
    if (!definition) {
      this.#finish(active, { reason: `CannotStartContainerError: no local entry point for job definition "${row.definition}"` });
      settle();
      return;
    }
    const spec = JSON.parse(row.spec) as StoredSpec;
    const argv = [...definition.command, ...(spec.command ?? [])];
    const file = argv[0] === 'node' ? process.execPath : argv[0]!;
    const env: NodeJS.ProcessEnv = {
      ...this.#env,
      // What the Batch job definition's environment gives a job on AWS (its table and bucket), locally: the data folder.
      FLYWHEEL_DATA_DIR: this.dataDir,
      ...definition.environment,
      ...spec.environment,
      AWS_BATCH_JOB_ID: row.job_id,
      AWS_BATCH_JOB_ATTEMPT: String(row.attempts),
      AWS_BATCH_JQ_NAME: `local-${row.pool}`,
      FLYWHEEL_COMPUTE_CATEGORY: row.category,
    };
    if (row.array_index !== null) env['AWS_BATCH_JOB_ARRAY_INDEX'] = String(row.array_index);
    else delete env['AWS_BATCH_JOB_ARRAY_INDEX'];

    const log = createWriteStream(this.#logFile(row.job_id), { flags: 'a' });
    active.log = log;
    const child = spawn(file, argv.slice(1), { cwd: definition.cwd ?? REPOSITORY_ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    active.child = child;
    const lineWriter = () => {
      let partial = '';
      return {
        write: (chunk: Buffer) => {
          const text = partial + chunk.toString('utf8');
          const parts = text.split('\n');
          partial = parts.pop() ?? '';
          const ts = this.#now();
          for (const line of parts) log.write(`${ts} ${line}\n`);
        },
        flush: () => {
          if (partial !== '') log.write(`${this.#now()} ${partial}\n`);
          partial = '';
        },
      };
    };
    const out = lineWriter();
    const err = lineWriter();
    child.stdout!.on('data', out.write);
    child.stderr!.on('data', err.write);

    let spawnError: Error | undefined;
    child.once('error', (error) => {
      spawnError = error;
    });
    child.once('spawn', () => {
      if (this.#closed) return;
      this.#sql.get("UPDATE jobs SET status = 'RUNNING', pid = ? WHERE job_id = ? AND status = 'STARTING'").run(child.pid!, row.job_id);
      const timeout = spec.timeoutSeconds;
      if (timeout) {
        active.timer = setTimeout(() => {
          active.timedOut = true;
          this.#kill(active, {});
        }, timeout * 1000);
      }
      // A cancel that came between the claim and the spawn.
      const pending = (this.#sql.get('SELECT cancel_reason FROM jobs WHERE job_id = ?').get(row.job_id) as { cancel_reason: string | null }).cancel_reason;
      if (pending) this.#kill(active, { cancelReason: pending });
    });
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      // Stragglers of the tree (a backgrounded grandchild holding the pipes) go with the leader.
      if (child.pid) killGroup(child.pid, 'SIGKILL');
    });
    child.once('close', (code, signal) => {
      out.flush();
      err.flush();
      if (active.timer) clearTimeout(active.timer);
      if (active.killTimer) clearTimeout(active.killTimer);
      log.end(() => {
        const e = exit ?? { code, signal };
        if (spawnError) this.#finish(active, { reason: `CannotStartContainerError: ${spawnError.message}` });
        else this.#finish(active, { exitCode: e.code ?? 128 + (osConstants.signals[e.signal as NodeJS.Signals] ?? 0) });
        settle();
      });
    });
  }

  #kill(active: ActiveJob, options: { cancelReason?: string }): void {
    if (options.cancelReason !== undefined) active.cancelReason = options.cancelReason;
    if (active.killing) return;
    active.killing = true;
    const pid = active.child?.pid;
    if (!pid) return;
    killGroup(pid, 'SIGTERM');
    active.killTimer = setTimeout(() => killGroup(pid, 'SIGKILL'), this.#killGraceMs);
    active.killTimer.unref();
  }

  /** Records the end of an attempt: success, a retry, or failure (cancelled, timed out, exited non-zero). */
  #finish(active: ActiveJob, outcome: { exitCode?: number; reason?: string }): void {
    this.#active.delete(active.row.job_id);
    if (this.#closed) return;
    const now = this.#now();
    const { row } = active;
    inTransaction(this.#db, () => {
      const current = this.#sql.get('SELECT * FROM jobs WHERE job_id = ?').get(row.job_id) as unknown as JobRow;
      if (current.status !== 'STARTING' && current.status !== 'RUNNING') return;
      const cancelReason = active.cancelReason ?? current.cancel_reason;
      const exitCode = outcome.exitCode ?? null;
      let status: JobStatus;
      let reason: string | null;
      if (cancelReason) [status, reason] = ['FAILED', cancelReason];
      else if (active.timedOut) [status, reason] = ['FAILED', REASONS.timeout];
      else if (exitCode === 0) [status, reason] = ['SUCCEEDED', null];
      else if (current.attempts < current.max_attempts) [status, reason] = ['RUNNABLE', `attempt ${current.attempts} failed (${outcome.reason ?? `exit code ${exitCode}`}); retrying`];
      else [status, reason] = ['FAILED', outcome.reason ?? REASONS.exited];
      this.#sql
        .get('UPDATE jobs SET status = ?, status_reason = ?, exit_code = ?, pid = NULL, stopped_at = ?, runnable_at = ? WHERE job_id = ?')
        .run(status, reason, exitCode, status === 'RUNNABLE' ? null : now, status === 'RUNNABLE' ? now : current.runnable_at, row.job_id);
      if (row.parent_id !== null) this.#refreshParent(row.parent_id);
    });
    setImmediate(() => this.#pump());
  }
}
