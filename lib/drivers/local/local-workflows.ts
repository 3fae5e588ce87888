/**
 * Workflows port for the local runtime: runs the very definition the CDK app synthesizes with the npm package
 * `aws-local-stepfunctions`, one local handler per Task state, and keeps every execution as a row in SQLite
 * (`workflows.sqlite`), with its state events, so executions survive restarts and another process (the CLI) can
 * describe them.
 *
 * Task states are handled by resource, as Step Functions would dispatch them:
 * - `arn:aws:states:::lambda:invoke`: the handler registered for `Parameters.FunctionName` gets `Parameters.Payload`;
 *   its answer comes back as `{ Payload, StatusCode: 200 }` (the Lambda integration's shape, so `$.Payload…` selectors
 *   work unchanged). A handler's error keeps its name (`Flywheel.ValidationError`), as a Lambda's errorType does.
 * - `arn:aws:states:::batch:submitJob(.sync)`: the SubmitJob parameters go to the jobs port (queue ARN → pool, job
 *   definition ARN → definition name, ShareIdentifier → category); `.sync` polls until the job ends and answers with
 *   DescribeJobs' PascalCase fields. A failed job throws `States.TaskFailed`; a submission that fails for a reason a
 *   retry may fix throws `Batch.AWSBatchException` (others `Batch.ClientException`), so the definition's Retry and
 *   Catch behave as they do on AWS.
 *
 * Names are idempotency keys. Starting a name that exists with the same input returns it; with another input it throws
 * `Flywheel.ExecutionAlreadyExists` (as StartExecution does). A RUNNING execution whose runner is gone (the process
 * crashed or was stopped) is run again from the start when its name is started again or when `resumeInterrupted()` is
 * called; so is an execution that ended FAILED, TIMED_OUT or ABORTED when its name is started again (what a redrive
 * does on AWS), and a SUCCEEDED one when the start asks `again`. The steps are idempotent, and each Batch submission
 * carries an idempotency token made of the execution, its generation (how many times it was run again after an end),
 * the job name and the try number: a run resumed after a crash finds the jobs its predecessor submitted, so a job
 * that already finished is not run again; a run after an end submits afresh what the steps ask for (they keep the
 * shards that finished), so a failed shard is tried again. Results are never counted twice.
 *
 * @example
 * const workflows = new LocalWorkflows(openDatabase('.flywheel/workflows.sqlite'), { sweep: spec });
 * const { executionId } = await workflows.start('sweep', { name: 'sweep-1', input });
 * const done = await workflows.waitFor(executionId);
 */
import { randomUUID } from 'node:crypto';
import type { DatabaseSync } from 'node:sqlite';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { NotFoundError, ValidationError } from '../../errors.ts';
import { ExecutionAlreadyExistsError, ExecutionNotFoundError } from '../workflow-errors.ts';
import { waitForJob } from '../../compute/wait-for-job.ts';
import { COMPUTE_CATEGORIES, type ComputeCategory, type ComputePool, type JobDescription, type JobsPort } from '../../ports/jobs.ts';
import type { ExecutionDescription, ExecutionStatus, StartOptions, WorkflowsPort } from '../../ports/workflows.ts';
import { canonicalJson } from '../canonical-json.ts';
import { aslSubsetViolations } from './asl-subset.ts';
import { StatementCache } from './sqlite-database.ts';

/** A Lambda step run in-process: the invoke's Payload in, the function's answer out. */
export type LocalLambdaHandler = (payload: unknown) => Promise<unknown>;

export interface LocalBatchTargets {
  jobs: JobsPort;
  /** Job queue ARN (as written in the definition) → pool. */
  queues: Record<string, ComputePool>;
  /** Job definition ARN (as written in the definition) → the jobs port's definition name. */
  definitions: Record<string, string>;
  /** Between DescribeJobs polls of a `.sync` task; default 1000 ms. */
  pollMs?: number;
}

export interface LocalWorkflowSpec {
  definition: object;
  /** Lambda handlers by the FunctionName the definition invokes. */
  lambdas: Record<string, LocalLambdaHandler>;
  batch?: LocalBatchTargets;
}

export interface LocalWorkflowsOptions {
  now?: () => Date;
  /**
   * Retry pauses in ms by state name (aws-local-stepfunctions' `retryIntervalOverrides`), e.g. `{ SubmitShardJob: 0 }`
   * in tests. Absent: the definition's backoff with full jitter, as on AWS.
   */
  retryPauseOverrides?: Record<string, number | number[]>;
  /** Called after an execution ends (any status): the CLI and tests wait on it. */
  onFinished?: (execution: ExecutionDescription) => void;
  /** How often a running execution's heartbeat is written; a row silent for 3 × this is orphaned. Default 5000 ms. */
  heartbeatMs?: number;
}

/** One state event of an execution, as `history()` returns it. */
export interface LocalExecutionEvent {
  seq: number;
  type: string;
  state?: string;
  /** The Map iteration index, for events inside one. */
  index?: number;
  error?: string;
  at: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS workflow_executions (
  execution_id TEXT PRIMARY KEY,
  workflow TEXT NOT NULL,
  name TEXT NOT NULL,
  status TEXT NOT NULL,
  input TEXT NOT NULL,
  output TEXT,
  error TEXT,
  cause TEXT,
  started_at INTEGER NOT NULL,
  stopped_at INTEGER,
  owner TEXT,
  heartbeat_at INTEGER,
  runs INTEGER NOT NULL DEFAULT 1,
  generation INTEGER NOT NULL DEFAULT 0,
  UNIQUE (workflow, name)
);
CREATE TABLE IF NOT EXISTS workflow_events (
  execution_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  run INTEGER NOT NULL,
  type TEXT NOT NULL,
  state TEXT,
  map_index INTEGER,
  error TEXT,
  at INTEGER NOT NULL,
  PRIMARY KEY (execution_id, seq)
);
`;

interface ExecutionRow {
  execution_id: string;
  workflow: string;
  name: string;
  status: ExecutionStatus;
  input: string;
  output: string | null;
  error: string | null;
  cause: string | null;
  started_at: number;
  stopped_at: number | null;
  owner: string | null;
  heartbeat_at: number | null;
  runs: number;
  /** Runs after an end (0 for the first; a resume after a crash keeps it): part of each Batch idempotency token. */
  generation: number;
}

/** Step Functions' largest state payload: a bigger Lambda answer fails the state as on AWS. */
const MAX_PAYLOAD_BYTES = 256 * 1024;
/** Execution names: Step Functions allows 1–80 of these characters. */
const NAME_PATTERN = /^[A-Za-z0-9_-]{1,80}$/;
/** Runners alive in this process (owner ids `<pid>/<instance>`): a row owned by another instance of this pid that is gone is orphaned. */
const liveInstances = new Set<string>();

/** An error whose `name` is what the state machine's Retry/Catch match on. */
function namedError(name: string, message: string): Error {
  const error = new Error(message);
  error.name = name;
  return error;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class LocalWorkflows implements WorkflowsPort {
  readonly #db: DatabaseSync;
  readonly #sql: StatementCache;
  readonly #specs: Record<string, LocalWorkflowSpec>;
  readonly #now: () => Date;
  readonly #options: LocalWorkflowsOptions;
  readonly #owner = `${process.pid}/${randomUUID()}`;
  readonly #running = new Map<string, { abort: () => void; done: Promise<void> }>();
  readonly #heartbeat: NodeJS.Timeout;
  readonly #heartbeatMs: number;
  #closed = false;

  constructor(db: DatabaseSync, specs: Record<string, LocalWorkflowSpec>, options: LocalWorkflowsOptions = {}) {
    this.#db = db;
    this.#specs = specs;
    this.#options = options;
    this.#now = options.now ?? (() => new Date());
    this.#heartbeatMs = options.heartbeatMs ?? 5000;
    db.exec(SCHEMA);
    // Folders made before `generation` existed get the column (every run so far was generation 0).
    const columns = db.prepare(`PRAGMA table_info(workflow_executions)`).all() as Array<{ name: string }>;
    if (!columns.some((c) => c.name === 'generation')) db.exec(`ALTER TABLE workflow_executions ADD COLUMN generation INTEGER NOT NULL DEFAULT 0`);
    this.#sql = new StatementCache(db);
    for (const [workflow, spec] of Object.entries(specs)) {
      // Validates the definition once, as CreateStateMachine would (the runs themselves skip validation), and holds
      // it to the subset both runtimes execute.
      new StateMachine(spec.definition as StateMachineDefinition);
      const violations = aslSubsetViolations(spec.definition);
      if (violations.length > 0) throw new Error(`workflow ${workflow} is outside the two-runtime subset:\n${violations.join('\n')}`);
      if (!NAME_PATTERN.test(workflow)) throw new Error(`workflow name ${workflow} is not a valid state machine name`);
    }
    liveInstances.add(this.#owner);
    this.#heartbeat = setInterval(() => this.#beat(), this.#heartbeatMs);
    this.#heartbeat.unref();
  }

  static executionId(workflow: string, name: string): string {
    return `arn:aws:states:local:000000000000:execution:${workflow}:${name}`;
  }

  async start(workflow: string, options: StartOptions): Promise<{ executionId: string }> {
    if (this.#closed) throw new Error('LocalWorkflows is closed');
    if (!this.#specs[workflow]) throw new NotFoundError(`no workflow named ${workflow} (known: ${Object.keys(this.#specs).join(', ')})`);
    if (!NAME_PATTERN.test(options.name)) {
      throw new ValidationError(`execution name ${JSON.stringify(options.name)}: 1–80 letters, digits, - or _`, [{ path: 'name', message: 'pattern' }]);
    }
    const executionId = LocalWorkflows.executionId(workflow, options.name);
    const input = canonicalJson(options.input ?? {});
    if (Buffer.byteLength(input) > MAX_PAYLOAD_BYTES) throw new ValidationError('execution input over 256 KiB: pass keys, not bodies', [{ path: 'input', message: 'over 256 KiB' }]);
    const now = this.#now().getTime();
    const inserted = this.#sql
      .get(
        `INSERT INTO workflow_executions (execution_id, workflow, name, status, input, started_at, owner, heartbeat_at)
         VALUES (?, ?, ?, 'RUNNING', ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      )
      .run(executionId, workflow, options.name, input, now, this.#owner, now);
    if (inserted.changes === 1) {
      this.#run(executionId);
      return { executionId };
    }
    const row = this.#row(executionId);
    if (row.input !== input) {
      throw new ExecutionAlreadyExistsError(`execution ${options.name} of ${workflow} exists with another input`);
    }
    if (row.status === 'RUNNING' && this.#orphaned(row)) this.#adopt(row);
    else if (row.status === 'FAILED' || row.status === 'TIMED_OUT' || row.status === 'ABORTED' || (row.status === 'SUCCEEDED' && options.again)) this.#rerun(row);
    return { executionId };
  }

  async describe(executionId: string): Promise<ExecutionDescription> {
    return this.#describe(this.#row(executionId));
  }

  /** Executions of a workflow, newest first. */
  async list(workflow: string, options: { status?: ExecutionStatus; limit?: number } = {}): Promise<ExecutionDescription[]> {
    const rows = this.#sql
      .get(
        `SELECT * FROM workflow_executions WHERE workflow = ? AND (? IS NULL OR status = ?) ORDER BY started_at DESC, name DESC LIMIT ?`,
      )
      .all(workflow, options.status ?? null, options.status ?? null, options.limit ?? 100) as unknown as ExecutionRow[];
    return rows.map((row) => this.#describe(row));
  }

  /** Resolves when the execution is no longer RUNNING (polling the row, so it also sees other processes' runs). */
  async waitFor(executionId: string, options: { timeoutMs?: number; pollMs?: number } = {}): Promise<ExecutionDescription> {
    const deadline = Date.now() + (options.timeoutMs ?? 600_000);
    for (;;) {
      const execution = await this.describe(executionId);
      if (execution.status !== 'RUNNING') return execution;
      if (Date.now() > deadline) throw new Error(`execution ${executionId} still RUNNING after ${options.timeoutMs ?? 600_000} ms`);
      await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 50));
    }
  }

  /** The state events of an execution, every run of it, in order. */
  history(executionId: string): LocalExecutionEvent[] {
    const rows = this.#sql
      .get(`SELECT seq, type, state, map_index, error, at FROM workflow_events WHERE execution_id = ? ORDER BY seq`)
      .all(executionId) as Array<{ seq: number; type: string; state: string | null; map_index: number | null; error: string | null; at: number }>;
    return rows.map((r) => ({
      seq: r.seq,
      type: r.type,
      ...(r.state !== null ? { state: r.state } : {}),
      ...(r.map_index !== null ? { index: r.map_index } : {}),
      ...(r.error !== null ? { error: r.error } : {}),
      at: r.at,
    }));
  }

  /** How many times an execution was run (1, plus one per resume after a crash or an unsuccessful end). */
  runs(executionId: string): number {
    return this.#row(executionId).runs;
  }

  /** Runs again every RUNNING execution whose runner is gone (the local runtime calls this at start). */
  resumeInterrupted(): string[] {
    const rows = this.#sql.get(`SELECT * FROM workflow_executions WHERE status = 'RUNNING'`).all() as unknown as ExecutionRow[];
    const resumed: string[] = [];
    for (const row of rows) {
      if (!this.#specs[row.workflow] || !this.#orphaned(row)) continue;
      if (this.#adopt(row)) resumed.push(row.execution_id);
    }
    return resumed;
  }

  /**
   * Stops running executions in this process without ending them: their rows stay RUNNING, to be resumed by the next
   * start of the same name or by `resumeInterrupted()` (what a crash leaves, done cleanly).
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#heartbeat);
    liveInstances.delete(this.#owner);
    const running = [...this.#running.values()];
    for (const r of running) r.abort();
    await Promise.all(running.map((r) => r.done));
  }

  #row(executionId: string): ExecutionRow {
    const row = this.#sql.get(`SELECT * FROM workflow_executions WHERE execution_id = ?`).get(executionId) as ExecutionRow | undefined;
    if (!row) throw new ExecutionNotFoundError(executionId);
    return row;
  }

  #describe(row: ExecutionRow): ExecutionDescription {
    return {
      executionId: row.execution_id,
      workflow: row.workflow,
      name: row.name,
      status: row.status,
      input: JSON.parse(row.input) as unknown,
      ...(row.output !== null ? { output: JSON.parse(row.output) as unknown } : {}),
      ...(row.error !== null ? { error: row.error } : {}),
      ...(row.cause !== null ? { cause: row.cause } : {}),
      startedAt: row.started_at,
      ...(row.stopped_at !== null ? { stoppedAt: row.stopped_at } : {}),
    };
  }

  #orphaned(row: ExecutionRow): boolean {
    if (row.owner === this.#owner) return !this.#running.has(row.execution_id);
    const [pid] = (row.owner ?? '').split('/');
    if (!row.owner || !pidAlive(Number(pid))) return true;
    if (Number(pid) === process.pid) return !liveInstances.has(row.owner);
    return (row.heartbeat_at ?? 0) < this.#now().getTime() - 3 * this.#heartbeatMs;
  }

  /** Takes over an orphaned RUNNING row (compare-and-set on its owner, so two processes never both resume it). */
  #adopt(row: ExecutionRow): boolean {
    const taken = this.#sql
      .get(
        `UPDATE workflow_executions SET owner = ?, heartbeat_at = ?, runs = runs + 1
         WHERE execution_id = ? AND status = 'RUNNING' AND owner IS ?`,
      )
      .run(this.#owner, this.#now().getTime(), row.execution_id, row.owner);
    if (taken.changes !== 1) return false;
    this.#run(row.execution_id);
    return true;
  }

  /**
   * Runs an execution that ended again (compare-and-set on its status: two starts rerun it once), as a new
   * generation: its Batch submissions get new idempotency tokens, so a shard whose job failed is tried again (the
   * steps keep the shards that finished: plan-shards marks them done).
   */
  #rerun(row: ExecutionRow): void {
    const taken = this.#sql
      .get(
        `UPDATE workflow_executions SET status = 'RUNNING', output = NULL, error = NULL, cause = NULL, stopped_at = NULL,
           owner = ?, heartbeat_at = ?, runs = runs + 1, generation = generation + 1
         WHERE execution_id = ? AND status = ?`,
      )
      .run(this.#owner, this.#now().getTime(), row.execution_id, row.status);
    if (taken.changes === 1) this.#run(row.execution_id);
  }

  #beat(): void {
    if (this.#running.size === 0) return;
    this.#sql
      .get(`UPDATE workflow_executions SET heartbeat_at = ? WHERE owner = ? AND status = 'RUNNING'`)
      .run(this.#now().getTime(), this.#owner);
  }

  #run(executionId: string): void {
    const row = this.#row(executionId);
    const spec = this.#specs[row.workflow]!;
    const input = JSON.parse(row.input) as never;
    const batchTries = new Map<string, number>();
    // Stops the handlers' own waits (a `.sync` poll) when the run is stopped: the library's abort only stops the states.
    const stopped = new AbortController();
    // Tokens name the execution and its generation (the first keeps the plain id, as folders made before it have).
    const tokenScope = row.generation > 0 ? `${executionId}~g${row.generation}` : executionId;
    const handlers = this.#handlers(spec, tokenScope, batchTries, stopped.signal);
    const machine = new StateMachine(spec.definition as StateMachineDefinition, { validationOptions: { noValidate: true } });
    const execution = machine.run(input, {
      overrides: {
        taskResourceLocalHandlers: handlers as never,
        ...(this.#options.retryPauseOverrides ? { retryIntervalOverrides: this.#options.retryPauseOverrides } : {}),
      },
      context: {
        Execution: { Id: executionId, Name: row.name, Input: input, StartTime: new Date(row.started_at).toISOString() },
        StateMachine: { Id: `arn:aws:states:local:000000000000:stateMachine:${row.workflow}`, Name: row.workflow },
      } as never,
    });
    const run = row.runs;
    let aborted = false;
    const recording = this.#record(executionId, run, execution.eventLogs);
    const done = (async () => {
      let status: ExecutionStatus = 'SUCCEEDED';
      let output: string | null = null;
      let error: string | null = null;
      let cause: string | null = null;
      try {
        output = JSON.stringify(await execution.result);
      } catch (thrown) {
        const failure = failureOf(thrown);
        status = failure.status;
        error = failure.error;
        cause = failure.cause;
      }
      await recording.catch(() => undefined);
      this.#running.delete(executionId);
      if (aborted) return; // stopped by close(): the row stays RUNNING, to be resumed
      this.#sql
        .get(
          `UPDATE workflow_executions SET status = ?, output = ?, error = ?, cause = ?, stopped_at = ?
           WHERE execution_id = ? AND owner = ? AND status = 'RUNNING'`,
        )
        .run(status, output, error, cause, this.#now().getTime(), executionId, this.#owner);
      this.#options.onFinished?.(this.#describe(this.#row(executionId)));
    })();
    this.#running.set(executionId, {
      abort: () => {
        aborted = true;
        stopped.abort();
        execution.abort();
      },
      done,
    });
  }

  async #record(executionId: string, run: number, events: AsyncGenerator<unknown>): Promise<void> {
    const last = this.#sql.get(`SELECT COALESCE(MAX(seq), 0) AS seq FROM workflow_events WHERE execution_id = ?`).get(executionId) as { seq: number };
    let seq = last.seq;
    const insert = this.#sql.get(
      `INSERT INTO workflow_events (execution_id, seq, run, type, state, map_index, error, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for await (const raw of events) {
      const event = raw as { type: string; timestamp?: number; state?: { name?: string }; parentState?: { name?: string }; index?: number; Error?: string };
      seq++;
      const state = event.state?.name ?? event.parentState?.name ?? null;
      insert.run(executionId, seq, run, event.type, state, event.index ?? null, event.Error ?? null, event.timestamp ?? Date.now());
    }
  }

  /** One local handler per Task state of the definition (Map iterations included), by state name. */
  #handlers(spec: LocalWorkflowSpec, tokenScope: string, batchTries: Map<string, number>, signal: AbortSignal): Record<string, (input: never) => Promise<never>> {
    const handlers: Record<string, (input: never) => Promise<never>> = {};
    for (const [name, state] of taskStates(spec.definition as AslLike)) {
      const resource = String(state.Resource);
      if (resource === 'arn:aws:states:::lambda:invoke') {
        handlers[name] = (async (parameters: { FunctionName: string; Payload?: unknown }) => {
          const handler = spec.lambdas[parameters.FunctionName];
          if (!handler) throw namedError('Lambda.ResourceNotFoundException', `no local handler for function ${parameters.FunctionName}`);
          const answer = await handler(parameters.Payload ?? {});
          const payload = answer === undefined ? null : (JSON.parse(JSON.stringify(answer)) as unknown);
          if (Buffer.byteLength(JSON.stringify(payload)) > MAX_PAYLOAD_BYTES) {
            throw namedError('States.DataLimitExceeded', `${parameters.FunctionName} answered over 256 KiB: pass keys, not bodies`);
          }
          return { ExecutedVersion: '$LATEST', Payload: payload, StatusCode: 200 };
        }) as never;
      } else if (resource === 'arn:aws:states:::batch:submitJob.sync' || resource === 'arn:aws:states:::batch:submitJob') {
        const sync = resource.endsWith('.sync');
        handlers[name] = ((parameters: BatchSubmitParameters) => this.#submitBatch(spec, tokenScope, batchTries, parameters, sync, signal)) as never;
      } else {
        throw new Error(`state ${name}: resource ${resource} has no local handler (the subset is Lambda invoke and Batch submitJob)`);
      }
    }
    return handlers;
  }

  async #submitBatch(
    spec: LocalWorkflowSpec,
    tokenScope: string,
    batchTries: Map<string, number>,
    parameters: BatchSubmitParameters,
    sync: boolean,
    signal: AbortSignal,
  ): Promise<unknown> {
    const batch = spec.batch;
    if (!batch) throw namedError('Batch.ClientException', 'this workflow has no local Batch targets');
    const pool = batch.queues[parameters.JobQueue];
    const definition = batch.definitions[parameters.JobDefinition];
    const category = parameters.ShareIdentifier as ComputeCategory | undefined;
    if (!pool) throw namedError('Batch.ClientException', `unknown job queue ${parameters.JobQueue}`);
    if (!definition) throw namedError('Batch.ClientException', `unknown job definition ${parameters.JobDefinition}`);
    if (!category || !COMPUTE_CATEGORIES.includes(category)) {
      throw namedError('Batch.ClientException', `a fair-share queue needs a ShareIdentifier among ${COMPUTE_CATEGORIES.join(', ')}`);
    }
    // The try number makes each Retry a new job, and makes a resumed run (which counts tries from 0 again) find the
    // jobs of the run before it: a finished one is not run twice.
    const tryNumber = batchTries.get(parameters.JobName) ?? 0;
    batchTries.set(parameters.JobName, tryNumber + 1);
    const environment = Object.fromEntries((parameters.ContainerOverrides?.Environment ?? []).map((e) => [e.Name, String(e.Value)]));
    let jobId: string;
    try {
      ({ jobId } = await batch.jobs.submit({
        name: parameters.JobName,
        definition,
        category,
        pool,
        environment,
        ...(parameters.ArrayProperties?.Size !== undefined ? { arraySize: parameters.ArrayProperties.Size } : {}),
        ...(parameters.ContainerOverrides?.Command ? { command: parameters.ContainerOverrides.Command } : {}),
        ...(parameters.Timeout?.AttemptDurationSeconds ? { timeoutSeconds: parameters.Timeout.AttemptDurationSeconds } : {}),
        ...(parameters.RetryStrategy?.Attempts ? { retries: parameters.RetryStrategy.Attempts - 1 } : {}),
        ...(parameters.SchedulingPriorityOverride !== undefined ? { schedulingPriority: parameters.SchedulingPriorityOverride } : {}),
        idempotencyToken: `${tokenScope}/${parameters.JobName}/${tryNumber}`,
      }));
    } catch (error) {
      const name = (error as Error).name;
      const retryable = name === 'Flywheel.TransientError' || name === 'Batch.AWSBatchException';
      throw namedError(retryable ? 'Batch.AWSBatchException' : 'Batch.ClientException', (error as Error).message);
    }
    if (!sync) return { JobId: jobId, JobName: parameters.JobName };
    const job = await waitForJob(batch.jobs, jobId, { pollMs: batch.pollMs ?? 1000, signal });
    const description = describeJobOutput(job);
    if (job.status === 'FAILED') throw namedError('States.TaskFailed', JSON.stringify(description));
    return description;
  }
}

interface BatchSubmitParameters {
  JobName: string;
  JobQueue: string;
  JobDefinition: string;
  ShareIdentifier?: string;
  SchedulingPriorityOverride?: number;
  ArrayProperties?: { Size?: number };
  ContainerOverrides?: { Environment?: Array<{ Name: string; Value: unknown }>; Command?: string[] };
  Timeout?: { AttemptDurationSeconds?: number };
  RetryStrategy?: { Attempts?: number };
}

/** The fields of DescribeJobs' job detail that a `.sync` task returns, PascalCase as Step Functions writes them. */
function describeJobOutput(job: JobDescription): Record<string, unknown> {
  return {
    JobId: job.jobId,
    JobName: job.name,
    Status: job.status,
    ShareIdentifier: job.category,
    ...(job.statusReason ? { StatusReason: job.statusReason } : {}),
    CreatedAt: job.createdAt,
    ...(job.startedAt !== undefined ? { StartedAt: job.startedAt } : {}),
    ...(job.stoppedAt !== undefined ? { StoppedAt: job.stoppedAt } : {}),
    ...(job.arraySize !== undefined ? { ArrayProperties: { Size: job.arraySize, StatusSummary: job.arrayStatusSummary ?? {} } } : {}),
    ...(job.exitCode !== undefined ? { Container: { ExitCode: job.exitCode } } : {}),
  };
}

type AslLike = { States?: Record<string, { Type?: string; Resource?: unknown; ItemProcessor?: AslLike; Iterator?: AslLike; Branches?: AslLike[] }> };

/** Every Task state of a definition with its name, nested Map and Parallel states included. */
export function taskStates(definition: AslLike): Array<[string, { Resource?: unknown }]> {
  const found: Array<[string, { Resource?: unknown }]> = [];
  for (const [name, state] of Object.entries(definition.States ?? {})) {
    if (state.Type === 'Task') found.push([name, state]);
    for (const nested of [state.ItemProcessor, state.Iterator, ...(state.Branches ?? [])]) {
      if (nested) found.push(...taskStates(nested));
    }
  }
  return found;
}

function failureOf(thrown: unknown): { status: ExecutionStatus; error: string; cause: string } {
  const error = thrown as Error & { cause?: unknown };
  if (error?.constructor?.name === 'ExecutionTimeoutError') return { status: 'TIMED_OUT', error: 'States.Timeout', cause: 'the execution ran past TimeoutSeconds' };
  if (error?.constructor?.name === 'ExecutionAbortedError') return { status: 'ABORTED', error: 'States.Aborted', cause: 'aborted' };
  const inner = (error?.cause ?? error) as Error;
  return { status: 'FAILED', error: inner?.name ?? 'Error', cause: inner?.message ?? String(thrown) };
}
