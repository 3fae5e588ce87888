/**
 * The local drivers bundled as `Ports`, over one data folder that survives restarts:
 * `records.sqlite` (records and the event log), `queue.sqlite` (the ingest queue and its DLQ) and `blobs/`; the query
 * port is DuckDB over the raw archive in `blobs/raw/…`, opened on its first query.
 * Separate database files keep the queue's writes (every accepted request) from waiting on the processor's
 * batch writes. Another process (the CLI) may open the same folder at the same time.
 *
 * @example
 * const ports = openLocalPorts('.flywheel', { maxReceiveCount: 5 });
 * try { await ports.ingestQueue.send(body); } finally { ports.close(); }
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import type { Ports } from '../../ports/ports.ts';
import { DuckDbQuery } from './duckdb-query.ts';
import { FsBlobs } from './fs-blobs.ts';
import { LocalEvents } from './local-events.ts';
import { LocalJobs, type LocalJobsOptions } from './local-jobs.ts';
import { openDatabase } from './sqlite-database.ts';
import { SqliteQueue } from './sqlite-queue.ts';
import { SqliteRecords } from './sqlite-records.ts';

export interface LocalPortsOptions {
  /** Receives before an ingest message moves to the DLQ; default 5 (the dev stage's setting). */
  maxReceiveCount?: number;
  now?: () => Date;
  /**
   * Adds the local jobs driver (`jobs.sqlite`, `job-logs/` in the same folder). `run: true` (the default) makes this
   * process the runner that starts jobs; the CLI passes `run: false`. Absent: no jobs port.
   */
  jobs?: Omit<LocalJobsOptions, 'dataDir'>;
}

export interface LocalPorts extends Ports {
  records: SqliteRecords;
  blobs: FsBlobs;
  ingestQueue: SqliteQueue;
  ingestDeadLetters: SqliteQueue;
  events: LocalEvents;
  jobs?: LocalJobs;
  /** DuckDB over `<dataDir>/blobs/raw/…` (in memory; the database is created on the first query). */
  query: DuckDbQuery;
  /** The folder this bundle was opened on. */
  dataDir: string;
  /** Closes the database files; the bundle is unusable afterwards. */
  close(): void;
}

/** Queue names inside `queue.sqlite`. */
export const LOCAL_QUEUE_NAMES = { ingest: 'ingest', ingestDeadLetters: 'ingest-dlq' } as const;

export function openLocalPorts(dataDir: string, options: LocalPortsOptions = {}): LocalPorts {
  mkdirSync(dataDir, { recursive: true });
  const now = options.now ?? (() => new Date());
  const databases: DatabaseSync[] = [];
  const recordsDb = openDatabase(join(dataDir, 'records.sqlite'));
  databases.push(recordsDb);
  const queueDb = openDatabase(join(dataDir, 'queue.sqlite'));
  databases.push(queueDb);
  const ingestDeadLetters = new SqliteQueue(queueDb, LOCAL_QUEUE_NAMES.ingestDeadLetters, { now });
  const ingestQueue = new SqliteQueue(queueDb, LOCAL_QUEUE_NAMES.ingest, {
    now,
    deadLetter: ingestDeadLetters,
    maxReceiveCount: options.maxReceiveCount ?? 5,
  });
  const jobs = options.jobs ? new LocalJobs({ ...options.jobs, dataDir }) : undefined;
  const blobsRoot = join(dataDir, 'blobs');
  const query = new DuckDbQuery(blobsRoot);
  return {
    ...(jobs ? { jobs } : {}),
    records: new SqliteRecords(recordsDb),
    blobs: new FsBlobs(blobsRoot),
    query,
    ingestQueue,
    ingestDeadLetters,
    events: new LocalEvents(recordsDb, { now }),
    now,
    dataDir,
    close: () => {
      // Running jobs are killed and requeued at once; call `jobs.close()` first to also wait for their exits.
      if (jobs) void jobs.close();
      // Queries in flight finish first; the in-memory database holds nothing to keep.
      void query.close();
      for (const db of databases) if (db.isOpen) db.close();
    },
  };
}
