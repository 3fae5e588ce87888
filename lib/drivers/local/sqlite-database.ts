/**
 * Opens a `node:sqlite` database the way every local driver needs it: WAL (readers never block the writer, so the
 * CLI in another process can read while the server writes), a busy timeout (so two writers in two processes wait
 * for each other instead of failing), and a chosen `synchronous` level.
 */
import { DatabaseSync, type StatementSync } from 'node:sqlite';

export interface OpenDatabaseOptions {
  /**
   * `FULL` fsyncs the WAL on every commit (a commit survives power loss); `NORMAL` survives a crash of the
   * process but not of the machine.
   */
  synchronous?: 'FULL' | 'NORMAL';
  busyTimeoutMs?: number;
}

export function openDatabase(path: string, options: OpenDatabaseOptions = {}): DatabaseSync {
  const db = new DatabaseSync(path, { timeout: options.busyTimeoutMs ?? 5000 });
  db.exec('PRAGMA journal_mode = WAL');
  db.exec(`PRAGMA synchronous = ${options.synchronous ?? 'FULL'}`);
  db.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
  return db;
}

/** Runs `work` in one write transaction (BEGIN IMMEDIATE takes the write lock up front: no upgrade deadlocks). */
export function inTransaction<T>(db: DatabaseSync, work: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = work();
    db.exec('COMMIT');
    return result;
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
}

/** Caches prepared statements by SQL text. */
export class StatementCache {
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, StatementSync>();

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  get(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }
}

interface PendingWrite {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: writes requested in the same turn of the event loop run in one transaction, so they share one
 * fsync, and each promise settles only after that commit. Concurrent callers (HTTP requests arriving together,
 * a consumer's `Promise.all` over a batch) then cost one fsync per turn instead of one each, with no loss of
 * durability. A write that throws fails alone: a failed statement is rolled back by SQLite, not the transaction.
 */
export class GroupCommit {
  readonly #db: DatabaseSync;
  #pending: PendingWrite[] = [];

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#pending.length === 0) setImmediate(() => this.#flush());
      this.#pending.push({ work, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  #flush(): void {
    const batch = this.#pending;
    this.#pending = [];
    if (batch.length === 0) return;
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      inTransaction(this.#db, () => {
        for (const write of batch) {
          try {
            outcomes.push({ ok: true, value: write.work() });
          } catch (error) {
            outcomes.push({ ok: false, error });
          }
        }
      });
    } catch (error) {
      for (const write of batch) write.reject(error);
      return;
    }
    batch.forEach((write, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) write.resolve(outcome.value);
      else write.reject(outcome.error);
    });
  }
}

const groupCommits = new WeakMap<DatabaseSync, GroupCommit>();

/** The one GroupCommit of a database connection (drivers sharing a connection share its commits). */
export function groupCommit(db: DatabaseSync): GroupCommit {
  let group = groupCommits.get(db);
  if (!group) {
    group = new GroupCommit(db);
    groupCommits.set(db, group);
  }
  return group;
}
