/**
 * Query port on DuckDB, in process: the views `metric_events` and `exposures` read the raw archive's JSON Lines files
 * under the local blobs folder (`<blobsRoot>/raw/metrics/tenant=<t>/dt=<day>/*.jsonl`, the same layout as S3), with
 * the same columns as the Glue tables on AWS, so the analyses' SQL runs on both engines unchanged.
 *
 * - Columns are typed explicitly (`METRIC_ROW_COLUMNS`, `ARCHIVE_COLUMN_TYPES`), never sniffed: a field a row lacks
 *   reads NULL, a field it has beyond them is ignored. `tenant` and `dt` come from the folder names (hive
 *   partitioning, both VARCHAR as on Athena), so `WHERE tenant = … AND dt >= …` opens only the matching files.
 * - DuckDB refuses a glob that matches no file, so a table stays an empty view of the right columns until its first
 *   file appears; each query looks again (one folder walk that stops at the first file), so files arriving later are
 *   read without a restart.
 * - The blobs driver writes a temporary file outside `raw/` and renames it into place, so the glob only ever sees
 *   complete files.
 * - Numbers come back as JS numbers (BIGINT, HUGEINT, DECIMAL included), timestamps as ISO strings, dates as
 *   `YYYY-MM-DD`. Any engine error is a `QueryError` with DuckDB's message.
 *
 * @example
 * const query = await DuckDbQuery.open('.flywheel/blobs');
 * const { rows } = await query.run("SELECT arm, count(*) AS n FROM exposures WHERE tenant = 'default' GROUP BY arm");
 * await query.close();
 */
import { availableParallelism } from 'node:os';
import { opendir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { DuckDBConnection, DuckDBInstance, DuckDBResultReader, DuckDBTypeId, JS } from '@duckdb/node-api';
import { ARCHIVE_COLUMN_TYPES, EXPOSURE_ROW_COLUMNS, METRIC_ROW_COLUMNS } from '../../experiments/schemas.ts';
import { ARCHIVE_TABLES, archiveKeys } from '../../experiments/record-keys.ts';
import { QueryError, sqlString, type QueryPort, type QueryResult, type QueryRow, type QueryValue } from '../../ports/query.ts';

/** The root view's tenant, as `QueryPort.tenant` documents it. */
export const DUCKDB_ROOT_TENANT = 'default';

interface ArchiveTable {
  name: string;
  /** The folder under the blobs root (`raw/metrics`). */
  folder: string;
  columns: readonly string[];
}

const TABLES: readonly ArchiveTable[] = [
  { name: ARCHIVE_TABLES.metrics, folder: archiveKeys.metricsRoot.replace(/\/$/, ''), columns: METRIC_ROW_COLUMNS },
  { name: ARCHIVE_TABLES.exposures, folder: archiveKeys.exposuresRoot.replace(/\/$/, ''), columns: EXPOSURE_ROW_COLUMNS },
];

/** The partitions, in the order both views (and the Glue tables) list them after the row's columns. */
const PARTITIONS = ['tenant', 'dt'] as const;

const duckType = (column: string): string => (ARCHIVE_COLUMN_TYPES[column] === 'double' ? 'DOUBLE' : 'VARCHAR');
const quoteIdentifier = (name: string): string => `"${name.replaceAll('"', '""')}"`;
const selectList = (table: ArchiveTable): string => [...table.columns, ...PARTITIONS].map(quoteIdentifier).join(', ');

/** DuckDB's message when a glob matches nothing (the archive was emptied under a live view). */
const NO_FILES_MESSAGE = 'No files found that match the pattern';

/** The shared engine: one in-memory database, its views, and which of them read files yet. */
class DuckDbEngine {
  readonly root: string;
  #instance: Promise<DuckDBInstance> | undefined;
  /** Tables whose view reads the glob (else the empty view). */
  readonly #live = new Set<string>();
  /** View changes one at a time; queries run beside them, each on its own connection. */
  #viewChanges: Promise<unknown> = Promise.resolve();
  readonly #inFlight = new Set<Promise<unknown>>();
  #closed = false;

  constructor(root: string) {
    this.root = resolve(root);
  }

  #open(): Promise<DuckDBInstance> {
    this.#instance ??= (async () => {
      // Loaded on the first query: the native library costs a few hundred ms, which a CLI command that runs no
      // analysis should not pay.
      const { DuckDBInstance } = await import('@duckdb/node-api');
      const instance = await DuckDBInstance.create(':memory:', { threads: String(availableParallelism()) });
      const connection = await instance.connect();
      try {
        for (const table of TABLES) await connection.run(this.#emptyView(table));
      } finally {
        connection.closeSync();
      }
      return instance;
    })();
    return this.#instance;
  }

  #emptyView(table: ArchiveTable): string {
    const columns = [...table.columns.map((c) => `CAST(NULL AS ${duckType(c)}) AS ${quoteIdentifier(c)}`), ...PARTITIONS.map((p) => `CAST(NULL AS VARCHAR) AS ${p}`)];
    return `CREATE OR REPLACE VIEW ${table.name} AS SELECT ${columns.join(', ')} WHERE false`;
  }

  #globView(table: ArchiveTable): string {
    const glob = `${join(this.root, table.folder)}/tenant=*/dt=*/*.jsonl`;
    const columns = `{${table.columns.map((c) => `${quoteIdentifier(c)}: '${duckType(c)}'`).join(', ')}}`;
    const partitionTypes = `{${PARTITIONS.map((p) => `'${p}': 'VARCHAR'`).join(', ')}}`;
    return (
      `CREATE OR REPLACE VIEW ${table.name} AS SELECT ${selectList(table)} FROM read_json(${sqlString(glob)}, ` +
      `format = 'newline_delimited', columns = ${columns}, hive_partitioning = true, hive_types = ${partitionTypes}, ` +
      `hive_types_autocast = false)`
    );
  }

  /** Switches each empty view whose folder now holds a file to the glob (or, `reset`, a live one back to empty). */
  #refreshViews(reset = false): Promise<void> {
    const change = this.#viewChanges.then(async () => {
      const instance = await this.#open();
      const connection = await instance.connect();
      try {
        for (const table of TABLES) {
          if (reset && this.#live.has(table.name)) {
            await connection.run(this.#emptyView(table));
            this.#live.delete(table.name);
          }
          if (!this.#live.has(table.name) && (await holdsArchiveFile(join(this.root, table.folder)))) {
            await connection.run(this.#globView(table));
            this.#live.add(table.name);
          }
        }
      } finally {
        connection.closeSync();
      }
    });
    this.#viewChanges = change.catch(() => undefined);
    return change;
  }

  async run(sql: string): Promise<QueryResult> {
    if (this.#closed) throw new QueryError('the DuckDB query driver is closed');
    const work = this.#run(sql);
    this.#inFlight.add(work);
    try {
      return await work;
    } finally {
      this.#inFlight.delete(work);
    }
  }

  async #run(sql: string): Promise<QueryResult> {
    const started = performance.now();
    try {
      if (this.#live.size < TABLES.length) await this.#refreshViews();
      let reader: DuckDBResultReader;
      try {
        reader = await this.#read(sql);
      } catch (error) {
        // Files can go (retention, a test's cleanup): fall back to the empty view and ask once more.
        if (!(error instanceof Error) || !error.message.includes(NO_FILES_MESSAGE)) throw error;
        await this.#refreshViews(true);
        reader = await this.#read(sql);
      }
      return { rows: rowsOf(reader), engine: 'duckdb', ms: performance.now() - started };
    } catch (error) {
      if (error instanceof QueryError) throw error;
      throw new QueryError(error instanceof Error ? error.message : String(error), { cause: error });
    }
  }

  async #read(sql: string): Promise<DuckDBResultReader> {
    const instance = await this.#open();
    const connection: DuckDBConnection = await instance.connect();
    try {
      return await connection.runAndReadAll(sql);
    } finally {
      connection.closeSync();
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([...this.#inFlight, this.#viewChanges]);
    if (this.#instance) (await this.#instance.catch(() => undefined))?.closeSync();
  }
}

/** Whether `<folder>/tenant=*\/dt=*\/*.jsonl` matches a file; stops at the first one. */
async function holdsArchiveFile(folder: string): Promise<boolean> {
  const entries = async function* (path: string, prefix: string | undefined, wantFiles: boolean) {
    let dir;
    try {
      dir = await opendir(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return;
      throw error;
    }
    for await (const entry of dir) {
      const matches = wantFiles ? entry.isFile() && entry.name.endsWith('.jsonl') : entry.isDirectory() && entry.name.startsWith(prefix!);
      if (matches) yield join(path, entry.name);
    }
  };
  for await (const tenant of entries(folder, 'tenant=', false)) {
    for await (const day of entries(tenant, 'dt=', false)) {
      // Leaving the loop early closes the directory handle.
      for await (const file of entries(day, undefined, true)) if (file) return true;
    }
  }
  return false;
}

/** `DuckDBTypeId.DATE` (the enum's value, without loading the library for it). */
const DATE_TYPE_ID = 13 as DuckDBTypeId;

/** One value as the port promises it: numbers as numbers, times as ISO strings, anything nested as JSON text. */
function portValue(value: JS, typeId: DuckDBTypeId): QueryValue {
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return null;
    return typeId === DATE_TYPE_ID ? value.toISOString().slice(0, 10) : value.toISOString();
  }
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? Number(v) : v));
}

function rowsOf(reader: DuckDBResultReader): QueryRow[] {
  const names = reader.deduplicatedColumnNames();
  const types = names.map((_, i) => reader.columnTypeId(i));
  return reader.getRowsJS().map((values) => {
    const row: QueryRow = {};
    names.forEach((name, i) => {
      row[name] = portValue(values[i] ?? null, types[i]!);
    });
    return row;
  });
}

/** One tenant's view of a shared engine. */
export class DuckDbQuery implements QueryPort {
  readonly tenant: string;
  readonly #engine: DuckDbEngine;
  /** Every tenant's view of this engine, so `forTenant` hands back the same object. */
  readonly #views: Map<string, DuckDbQuery>;

  /**
   * Opens lazily: the database is created on the first query (so a process that runs none pays nothing).
   * `DuckDbQuery.open` creates it at once.
   */
  constructor(blobsRoot: string);
  constructor(blobsRoot: string | DuckDbEngine, tenant: string = DUCKDB_ROOT_TENANT, views?: Map<string, DuckDbQuery>) {
    this.tenant = tenant;
    this.#engine = typeof blobsRoot === 'string' ? new DuckDbEngine(blobsRoot) : blobsRoot;
    this.#views = views ?? new Map();
    this.#views.set(tenant, this);
  }

  /** Opens the database over `<blobsRoot>/raw/…` now (one trivial query), for callers that want failures up front. */
  static async open(blobsRoot: string): Promise<DuckDbQuery> {
    const query = new DuckDbQuery(blobsRoot);
    await query.run('SELECT 1 AS ready');
    return query;
  }

  /** The folder the views read under. */
  get blobsRoot(): string {
    return this.#engine.root;
  }

  run(sql: string): Promise<QueryResult> {
    return this.#engine.run(sql);
  }

  /** The same database, for another tenant (the same object for the same tenant). */
  forTenant(tenant: string): QueryPort {
    if (tenant === '') throw new QueryError('a query view needs a tenant');
    // The engine-sharing signature is this file's own: the public one takes a folder.
    const Views = DuckDbQuery as unknown as new (engine: DuckDbEngine, tenant: string, views: Map<string, DuckDbQuery>) => DuckDbQuery;
    return this.#views.get(tenant) ?? new Views(this.#engine, tenant, this.#views);
  }

  /** Closes the database (every tenant's view shares it); queries in flight finish first. */
  close(): Promise<void> {
    return this.#engine.close();
  }
}
