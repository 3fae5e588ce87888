/**
 * Query port: SQL over the raw archive (`raw/metrics/…`, `raw/exposures/…`), on an engine made for scans.
 *
 * Drivers: Athena over the Glue tables the CDK app declares (`lib/drivers/aws/athena-query.ts`), and DuckDB over the
 * same JSON Lines files locally (`lib/drivers/local/duckdb-query.ts`). One SQL text serves both: the tables are
 * `metric_events` and `exposures` with the columns of `METRIC_ROW_COLUMNS` / `EXPOSURE_ROW_COLUMNS`
 * (`lib/experiments/schemas.ts`) plus the partitions `tenant` and `dt` (`YYYY-MM-DD`), and the SQL keeps to what
 * Trino and DuckDB both read (no engine-specific functions; `approx_*` avoided). Every query names its tenant
 * (`WHERE tenant = '…'`): Athena's injected projection refuses one that does not.
 *
 * Both drivers pass `test/contract/query.contract.ts`.
 *
 * @example
 * const rows = await query.run("SELECT arm, count(*) AS n FROM exposures WHERE tenant = 'default' GROUP BY arm");
 */
import { FlywheelError } from '../errors.ts';

export type QueryValue = string | number | boolean | null;
export type QueryRow = Record<string, QueryValue>;

export interface QueryResult {
  rows: QueryRow[];
  /** Which engine answered. */
  engine: 'athena' | 'duckdb';
  /** Wall time of the query. */
  ms: number;
  /** Bytes the engine scanned, when it says (Athena bills by it). */
  scannedBytes?: number;
}

export interface QueryPort {
  /**
   * The tenant whose partitions this view reads: every query the use cases build says `WHERE tenant = <this>`
   * (`scopePortsToTenant` hands a tenant's ports `forTenant(tenant)`; the root view is `default`).
   */
  readonly tenant: string;
  /** Runs one SELECT; numbers come back as numbers (BIGINT/DOUBLE), strings as strings. Throws `QueryError`. */
  run(sql: string): Promise<QueryResult>;
  /** The same engine's view for another tenant. */
  forTenant(tenant: string): QueryPort;
  close?(): Promise<void>;
}

/** The error name both drivers throw for a failed query: `Flywheel.QueryFailed`. */
export const QUERY_FAILED = 'Flywheel.QueryFailed';

/** A query the engine refused or failed (bad SQL, missing table, Athena FAILED/CANCELLED); the engine's reason is the message. */
export class QueryError extends FlywheelError {
  constructor(message: string, options?: ErrorOptions) {
    super(QUERY_FAILED, message, options);
  }
}

/** Quotes a string literal for SQL (both engines: standard single quotes, doubled). */
export function sqlString(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}
