/**
 * The runner lease: one process runs the jobs of a data folder. The runner's pid is kept in the `job_runner` table of
 * `jobs.sqlite`; a second live runner on the same folder is refused, and a lease whose holder died is taken over.
 * Other processes (the CLI) read it to know whether someone supervises running jobs.
 *
 * @example
 * const lease = new RunnerLease(store.db, dataDir);
 * lease.claim(); // throws ConfigurationError while another live process holds it
 * …
 * lease.release();
 */
import type { DatabaseSync } from 'node:sqlite';
import { ConfigurationError } from '../../../errors.ts';
import { isProcessAlive } from '../../../shared/process-liveness.ts';
import { inTransaction, StatementCache } from '../sqlite-database.ts';
import { defineRowCodec, integerColumn } from '../sqlite-rows.ts';

const JOB_RUNNER_DDL = 'CREATE TABLE IF NOT EXISTS job_runner (id INTEGER PRIMARY KEY CHECK (id = 1), pid INTEGER NOT NULL, started_at INTEGER NOT NULL);';

const runnerRow = defineRowCodec('job_runner', { pid: integerColumn });

export class RunnerLease {
  readonly #db: DatabaseSync;
  readonly #sql: StatementCache;
  readonly #dataDir: string;
  readonly #now: () => number;

  constructor(db: DatabaseSync, dataDir: string, now: () => number = Date.now) {
    this.#db = db;
    db.exec(JOB_RUNNER_DDL);
    this.#sql = new StatementCache(db);
    this.#dataDir = dataDir;
    this.#now = now;
  }

  /** The pid holding the lease, if any (alive or not). */
  holder(): number | undefined {
    return runnerRow.decodeIfPresent(this.#sql.get('SELECT pid FROM job_runner WHERE id = 1').get())?.pid;
  }

  /** True when a live process holds the lease. */
  held(): boolean {
    const pid = this.holder();
    return pid !== undefined && isProcessAlive(pid);
  }

  /** Takes the lease for this process; throws `ConfigurationError` when another live process holds it. */
  claim(): void {
    inTransaction(this.#db, () => {
      const current = this.holder();
      if (current !== undefined && current !== process.pid && isProcessAlive(current)) {
        throw new ConfigurationError(`another process (pid ${current}) runs the jobs of ${this.#dataDir}; open this one with run: false`);
      }
      this.#sql
        .get('INSERT INTO job_runner (id, pid, started_at) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET pid = excluded.pid, started_at = excluded.started_at')
        .run(process.pid, this.#now());
    });
  }

  /** Gives the lease up, if this process holds it. */
  release(): void {
    this.#sql.get('DELETE FROM job_runner WHERE pid = ?').run(process.pid);
  }
}
