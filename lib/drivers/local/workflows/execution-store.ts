/**
 * The execution store: the `workflow_executions` and `workflow_events` tables (in the database the caller opens,
 * `workflows.sqlite` locally), rows decoded by their schemas. One row per execution name, so executions survive
 * restarts and another process (the CLI) can describe them; ownership changes (adopt, rerun, finish) are
 * compare-and-set, so two processes never both run one execution.
 *
 * @example
 * const store = new ExecutionStore(db);
 * if (store.insert({ executionId, workflow, name, input, owner, now })) run(executionId);
 */
import type { DatabaseSync } from 'node:sqlite';
import { z } from 'zod';
import type { ExecutionStatus } from '../../../ports/workflows.ts';
import { ExecutionNotFoundError } from '../../../ports/workflow-errors.ts';
import { StatementCache } from '../sqlite-database.ts';
import { defineRowCodec, integerColumn } from '../sqlite-rows.ts';

const DDL = `
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

const EXECUTION_STATUSES = ['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED'] as const satisfies readonly ExecutionStatus[];

const executionRow = defineRowCodec('workflow_executions', {
  execution_id: z.string(),
  workflow: z.string(),
  name: z.string(),
  status: z.enum(EXECUTION_STATUSES),
  /** Canonical JSON, compared as text: the same name with the same input is the same execution. */
  input: z.string(),
  output: z.string().nullable(),
  error: z.string().nullable(),
  cause: z.string().nullable(),
  started_at: integerColumn,
  stopped_at: integerColumn.nullable(),
  /** `<pid>/<instance>` of the runner (`execution-liveness.ts`). */
  owner: z.string().nullable(),
  heartbeat_at: integerColumn.nullable(),
  runs: integerColumn,
  /** Runs after an end (0 for the first; a resume after a crash keeps it): part of each Batch idempotency token. */
  generation: integerColumn,
});
export type ExecutionRow = ReturnType<typeof executionRow.decode>;

const eventRow = defineRowCodec('workflow_events', {
  seq: integerColumn,
  type: z.string(),
  state: z.string().nullable(),
  map_index: integerColumn.nullable(),
  error: z.string().nullable(),
  at: integerColumn,
});
export type EventRow = ReturnType<typeof eventRow.decode>;

const columnNameRow = defineRowCodec('workflow_executions', { name: z.string() });
const lastSeqRow = defineRowCodec('workflow_events', { seq: integerColumn });

/** How a run ended, as written on the row. */
export interface ExecutionEnd {
  status: ExecutionStatus;
  output: string | null;
  error: string | null;
  cause: string | null;
}

/** One state event to append. */
export interface NewEvent {
  type: string;
  state: string | null;
  mapIndex: number | null;
  error: string | null;
  at: number;
}

export class ExecutionStore {
  readonly #sql: StatementCache;

  constructor(db: DatabaseSync) {
    db.exec(DDL);
    // Folders made before `generation` existed get the column (every run so far was generation 0).
    const columns = columnNameRow.decodeAll(db.prepare(`PRAGMA table_info(workflow_executions)`).all());
    if (!columns.some((c) => c.name === 'generation')) db.exec(`ALTER TABLE workflow_executions ADD COLUMN generation INTEGER NOT NULL DEFAULT 0`);
    this.#sql = new StatementCache(db);
  }

  /** The row of `executionId`; throws `Flywheel.ExecutionNotFound` when there is none. */
  get(executionId: string): ExecutionRow {
    const row = executionRow.decodeIfPresent(this.#sql.get(`SELECT * FROM workflow_executions WHERE execution_id = ?`).get(executionId));
    if (!row) throw new ExecutionNotFoundError(executionId);
    return row;
  }

  /** Executions of a workflow, newest first. */
  list(workflow: string, status: ExecutionStatus | undefined, limit: number): ExecutionRow[] {
    const sql = `SELECT * FROM workflow_executions WHERE workflow = ? AND (? IS NULL OR status = ?) ORDER BY started_at DESC, name DESC LIMIT ?`;
    return executionRow.decodeAll(this.#sql.get(sql).all(workflow, status ?? null, status ?? null, limit));
  }

  running(): ExecutionRow[] {
    return executionRow.decodeAll(this.#sql.get(`SELECT * FROM workflow_executions WHERE status = 'RUNNING'`).all());
  }

  /** A new RUNNING execution owned by `owner`; false when the name exists. */
  insert(row: { executionId: string; workflow: string; name: string; input: string; owner: string; now: number }): boolean {
    const inserted = this.#sql
      .get(
        `INSERT INTO workflow_executions (execution_id, workflow, name, status, input, started_at, owner, heartbeat_at)
         VALUES (?, ?, ?, 'RUNNING', ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      )
      .run(row.executionId, row.workflow, row.name, row.input, row.now, row.owner, row.now);
    return inserted.changes === 1;
  }

  /** Takes over a RUNNING row still owned by `previousOwner`, as another run; false when someone came first. */
  adopt(executionId: string, previousOwner: string | null, owner: string, now: number): boolean {
    const taken = this.#sql
      .get(
        `UPDATE workflow_executions SET owner = ?, heartbeat_at = ?, runs = runs + 1
         WHERE execution_id = ? AND status = 'RUNNING' AND owner IS ?`,
      )
      .run(owner, now, executionId, previousOwner);
    return taken.changes === 1;
  }

  /** Makes an execution that ended with `status` RUNNING again as a new generation; false when someone came first. */
  rerun(executionId: string, status: ExecutionStatus, owner: string, now: number): boolean {
    const taken = this.#sql
      .get(
        `UPDATE workflow_executions SET status = 'RUNNING', output = NULL, error = NULL, cause = NULL, stopped_at = NULL,
           owner = ?, heartbeat_at = ?, runs = runs + 1, generation = generation + 1
         WHERE execution_id = ? AND status = ?`,
      )
      .run(owner, now, executionId, status);
    return taken.changes === 1;
  }

  /** Marks the RUNNING rows of `owner` alive. */
  heartbeat(owner: string, now: number): void {
    this.#sql.get(`UPDATE workflow_executions SET heartbeat_at = ? WHERE owner = ? AND status = 'RUNNING'`).run(now, owner);
  }

  /** Ends a run, if `owner` still owns it and it is RUNNING. */
  finish(executionId: string, owner: string, end: ExecutionEnd, now: number): void {
    this.#sql
      .get(
        `UPDATE workflow_executions SET status = ?, output = ?, error = ?, cause = ?, stopped_at = ?
         WHERE execution_id = ? AND owner = ? AND status = 'RUNNING'`,
      )
      .run(end.status, end.output, end.error, end.cause, now, executionId, owner);
  }

  /** Ends a RUNNING execution (whoever owns it) as `end` says; false when it was not RUNNING. */
  abort(executionId: string, end: ExecutionEnd, now: number): boolean {
    const ended = this.#sql
      .get(
        `UPDATE workflow_executions SET status = ?, output = ?, error = ?, cause = ?, stopped_at = ?
         WHERE execution_id = ? AND status = 'RUNNING'`,
      )
      .run(end.status, end.output, end.error, end.cause, now, executionId);
    return ended.changes === 1;
  }

  /** The state events of an execution, every run of it, in order. */
  events(executionId: string): EventRow[] {
    return eventRow.decodeAll(this.#sql.get(`SELECT seq, type, state, map_index, error, at FROM workflow_events WHERE execution_id = ? ORDER BY seq`).all(executionId));
  }

  /** An appender for the events of one run, numbered after those already stored. */
  eventAppender(executionId: string, run: number): (event: NewEvent) => void {
    let seq = lastSeqRow.decode(this.#sql.get(`SELECT COALESCE(MAX(seq), 0) AS seq FROM workflow_events WHERE execution_id = ?`).get(executionId)).seq;
    const insert = this.#sql.get(`INSERT INTO workflow_events (execution_id, seq, run, type, state, map_index, error, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
    return (event) => {
      seq++;
      insert.run(executionId, seq, run, event.type, event.state, event.mapIndex, event.error, event.at);
    };
  }
}
