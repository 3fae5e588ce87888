/**
 * Workflows port for the local runtime: runs the very definition the CDK app synthesizes with the npm package
 * `aws-local-stepfunctions`, one local handler per Task state, and keeps every execution as a row in SQLite
 * (`workflows.sqlite`), with its state events, so executions survive restarts and another process (the CLI) can
 * describe them. This file answers the port and decides who runs what; each part does one job:
 *
 * - `workflows/execution-store.ts`: the executions and their events (rows decoded by schema).
 * - `workflows/execution-liveness.ts`: whether the runner owning a RUNNING execution is gone.
 * - `workflows/execution-run.ts`: one run of the state machine; `workflows/task-handlers.ts` its Task states,
 *   `workflows/batch-task.ts` the Batch translation.
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
 * await workflows.stop(executionId, { cause: 'stopped by a person' }); // ABORTED, its run aborted
 */
import type { DatabaseSync } from 'node:sqlite';
import { NotFoundError, ValidationError } from '../../errors.ts';
import type { ExecutionDescription, ExecutionStatus, StartOptions, WorkflowsPort } from '../../ports/workflows.ts';
import { canonicalJson } from '../../shared/canonical-json.ts';
import { ExecutionAlreadyExistsError } from '../../ports/workflow-errors.ts';
import { aslSubsetViolations } from './asl-subset.ts';
import { isOrphaned, registerRunner, unregisterRunner } from './workflows/execution-liveness.ts';
import { startExecutionRun, stateMachineOf, type ExecutionRun } from './workflows/execution-run.ts';
import { ExecutionStore, type ExecutionRow } from './workflows/execution-store.ts';
import { MAX_PAYLOAD_BYTES } from './workflows/task-handlers.ts';
import type { LocalWorkflowSpec } from './workflows/workflow-spec.ts';

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

/** Execution names: Step Functions allows 1–80 of these characters. */
const NAME_PATTERN = /^[A-Za-z0-9_-]{1,80}$/;

export class LocalWorkflows implements WorkflowsPort {
  readonly #store: ExecutionStore;
  readonly #specs: Record<string, LocalWorkflowSpec>;
  readonly #now: () => Date;
  readonly #options: LocalWorkflowsOptions;
  readonly #owner: string;
  readonly #running = new Map<string, { abort: () => void; done: Promise<void> }>();
  readonly #heartbeat: NodeJS.Timeout;
  readonly #heartbeatMs: number;
  #closed = false;

  constructor(db: DatabaseSync, specs: Record<string, LocalWorkflowSpec>, options: LocalWorkflowsOptions = {}) {
    this.#specs = specs;
    this.#options = options;
    this.#now = options.now ?? (() => new Date());
    this.#heartbeatMs = options.heartbeatMs ?? 5000;
    this.#store = new ExecutionStore(db);
    for (const [workflow, spec] of Object.entries(specs)) {
      // Validates the definition once, as CreateStateMachine would (the runs themselves skip validation), and holds
      // it to the subset both runtimes execute.
      stateMachineOf(spec.definition, true);
      const violations = aslSubsetViolations(spec.definition);
      if (violations.length > 0) throw new Error(`workflow ${workflow} is outside the two-runtime subset:\n${violations.join('\n')}`);
      if (!NAME_PATTERN.test(workflow)) throw new Error(`workflow name ${workflow} is not a valid state machine name`);
    }
    this.#owner = registerRunner();
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
    if (this.#store.insert({ executionId, workflow, name: options.name, input, owner: this.#owner, now })) {
      this.#run(executionId);
      return { executionId };
    }
    const row = this.#store.get(executionId);
    if (row.input !== input) {
      throw new ExecutionAlreadyExistsError(`execution ${options.name} of ${workflow} exists with another input`);
    }
    if (row.status === 'RUNNING' && this.#orphaned(row)) this.#adopt(row);
    else if (row.status === 'FAILED' || row.status === 'TIMED_OUT' || row.status === 'ABORTED' || (row.status === 'SUCCEEDED' && options.again)) this.#rerun(row);
    return { executionId };
  }

  async describe(executionId: string): Promise<ExecutionDescription> {
    return describeExecution(this.#store.get(executionId));
  }

  /**
   * Stops a RUNNING execution: its row ends ABORTED with `error` and `cause` (compare-and-set on RUNNING, so a run
   * that ended first keeps its end), and its run is aborted here if it runs here; a run in another process sees the
   * row no longer RUNNING at its next heartbeat and aborts itself. An execution that ended is left as it is.
   */
  async stop(executionId: string, options: { error?: string; cause?: string } = {}): Promise<void> {
    const row = this.#store.get(executionId);
    if (row.status !== 'RUNNING') return;
    const end = { status: 'ABORTED' as const, output: null, error: options.error ?? 'States.Aborted', cause: options.cause ?? 'stopped' };
    if (!this.#store.abort(executionId, end, this.#now().getTime())) return;
    this.#running.get(executionId)?.abort();
    this.#options.onFinished?.(describeExecution(this.#store.get(executionId)));
  }

  /** Executions of a workflow, newest first. */
  async list(workflow: string, options: { status?: ExecutionStatus; limit?: number } = {}): Promise<ExecutionDescription[]> {
    return this.#store.list(workflow, options.status, options.limit ?? 100).map(describeExecution);
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
    return this.#store.events(executionId).map((r) => ({
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
    return this.#store.get(executionId).runs;
  }

  /** Runs again every RUNNING execution whose runner is gone (the local runtime calls this at start). */
  resumeInterrupted(): string[] {
    const resumed: string[] = [];
    for (const row of this.#store.running()) {
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
    unregisterRunner(this.#owner);
    const running = [...this.#running.values()];
    for (const r of running) r.abort();
    await Promise.all(running.map((r) => r.done));
  }

  #orphaned(row: ExecutionRow): boolean {
    return isOrphaned(row, { owner: this.#owner, runsHere: this.#running.has(row.execution_id), now: this.#now().getTime(), heartbeatMs: this.#heartbeatMs });
  }

  /** Takes over an orphaned RUNNING row (compare-and-set on its owner, so two processes never both resume it). */
  #adopt(row: ExecutionRow): boolean {
    if (!this.#store.adopt(row.execution_id, row.owner, this.#owner, this.#now().getTime())) return false;
    this.#run(row.execution_id);
    return true;
  }

  /**
   * Runs an execution that ended again (compare-and-set on its status: two starts rerun it once), as a new
   * generation: its Batch submissions get new idempotency tokens, so a shard whose job failed is tried again (the
   * steps keep the shards that finished: plan-shards marks them done).
   */
  #rerun(row: ExecutionRow): void {
    if (this.#store.rerun(row.execution_id, row.status, this.#owner, this.#now().getTime())) this.#run(row.execution_id);
  }

  #beat(): void {
    if (this.#running.size === 0) return;
    this.#store.heartbeat(this.#owner, this.#now().getTime());
    // Stopped from another process (`stop` there ends the row): abort the run here too.
    for (const [executionId, run] of this.#running) if (this.#store.get(executionId).status !== 'RUNNING') run.abort();
  }

  #run(executionId: string): void {
    const row = this.#store.get(executionId);
    const spec = this.#specs[row.workflow];
    if (!spec) throw new NotFoundError(`no workflow named ${row.workflow}`);
    const run: ExecutionRun = startExecutionRun(row, spec, {
      appendEvent: this.#store.eventAppender(executionId, row.runs),
      ...(this.#options.retryPauseOverrides ? { retryPauseOverrides: this.#options.retryPauseOverrides } : {}),
    });
    const entry: { abort: () => void; done: Promise<void> } = { abort: run.abort, done: Promise.resolve() };
    entry.done = run.ended.then((end) => {
      // A run stopped and started again has a newer entry by now: only this run's own is removed.
      if (this.#running.get(executionId) === entry) this.#running.delete(executionId);
      if (!end) return; // stopped by close() (the row stays RUNNING, to be resumed) or by stop() (the row is ABORTED)
      this.#store.finish(executionId, this.#owner, end, this.#now().getTime());
      this.#options.onFinished?.(describeExecution(this.#store.get(executionId)));
    });
    this.#running.set(executionId, entry);
  }
}

/** The port's description of an execution row. */
function describeExecution(row: ExecutionRow): ExecutionDescription {
  return {
    executionId: row.execution_id,
    workflow: row.workflow,
    name: row.name,
    status: row.status,
    input: JSON.parse(row.input),
    ...(row.output !== null ? { output: JSON.parse(row.output) } : {}),
    ...(row.error !== null ? { error: row.error } : {}),
    ...(row.cause !== null ? { cause: row.cause } : {}),
    startedAt: row.started_at,
    ...(row.stopped_at !== null ? { stoppedAt: row.stopped_at } : {}),
  };
}
