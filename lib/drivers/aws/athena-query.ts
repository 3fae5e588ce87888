/**
 * Query port on Athena: SQL over the Glue tables `metric_events` and `exposures` that the CDK app declares over the
 * raw archive (`lib/experiments/infra/archive-tables.ts`). One query is StartQueryExecution in the workgroup (whose
 * enforced configuration says where results go and how many bytes a query may scan), GetQueryExecution polled with
 * backoff until it ends, then GetQueryResults page by page. Athena returns every value as text; the column types it
 * reports turn them back into numbers, booleans and ISO timestamps. A FAILED or CANCELLED query, or one that outlives
 * the poll policy (it is then stopped), is a `QueryError` with Athena's reason.
 *
 * @example
 * const query = AthenaQuery.fromEnv(); // FLYWHEEL_ATHENA_WORKGROUP, FLYWHEEL_GLUE_DATABASE
 * const { rows, scannedBytes } = await query.forTenant('acme').run("SELECT count(*) AS n FROM exposures WHERE tenant = 'acme'");
 */
import {
  AthenaClient,
  GetQueryExecutionCommand,
  GetQueryResultsCommand,
  InvalidRequestException,
  StartQueryExecutionCommand,
  StopQueryExecutionCommand,
  type ColumnInfo,
  type GetQueryResultsCommandOutput,
  type QueryExecution,
} from '@aws-sdk/client-athena';
import { ConfigurationError } from '../../errors.ts';
import { QueryError, type QueryPort, type QueryResult, type QueryRow, type QueryValue } from '../../ports/query.ts';

/** The environment variables `AthenaQuery.fromEnv` reads; `functionEnvironment` sets them on every function. */
export const ATHENA_QUERY_ENV = {
  workGroup: 'FLYWHEEL_ATHENA_WORKGROUP',
  database: 'FLYWHEEL_GLUE_DATABASE',
} as const;

/** How long to wait between GetQueryExecution calls, and for how long in all. */
export interface AthenaPollPolicy {
  firstDelayMs: number;
  backoffRate: number;
  maxDelayMs: number;
  /** After this much waiting the query is stopped and the run fails. */
  timeoutMs: number;
}

/**
 * 100 ms, ×2, capped at 2 s: the pauses run 0.1 + 0.2 + 0.4 + 0.8 + 1.6 = 3.1 s over the first five polls (a small
 * partition-pruned query usually ends inside them), then one poll every 2 s, about 30 calls a minute: far below
 * GetQueryExecution's per-account rate, even with a dozen analyses at once. 5 minutes in all, under the 15-minute
 * Lambda ceiling with room to store the analysis; the workgroup's bytes-scanned cutoff stops a runaway scan sooner.
 */
export const ATHENA_POLL_POLICY: AthenaPollPolicy = { firstDelayMs: 100, backoffRate: 2, maxDelayMs: 2000, timeoutMs: 5 * 60 * 1000 };

/** Rows per GetQueryResults page: Athena's maximum, so a 10 000-row result is ten calls. */
export const ATHENA_RESULTS_PAGE_SIZE = 1000;

/** The root view's tenant, as `QueryPort.tenant` documents it. */
export const ATHENA_ROOT_TENANT = 'default';

export interface AthenaQueryOptions {
  workGroup: string;
  /** The Glue database holding `metric_events` and `exposures`. */
  database: string;
  poll?: AthenaPollPolicy;
}

const NUMBER_TYPES = new Set(['tinyint', 'smallint', 'integer', 'int', 'bigint', 'double', 'float', 'real', 'decimal']);

/** One Athena cell (text, or absent for NULL) as the port promises it, by the column's reported type. */
export function athenaValue(text: string | undefined, type: string | undefined): QueryValue {
  if (text === undefined) return null;
  const t = (type ?? 'varchar').toLowerCase().replace(/\(.*$/, '');
  if (NUMBER_TYPES.has(t)) return Number(text);
  if (t === 'boolean') return text === 'true';
  if (t === 'timestamp' || t === 'timestamp with time zone') {
    // Athena prints `2026-12-04 10:00:00.000` (UTC, Trino's text form), or with ` UTC` after it.
    const parsed = new Date(`${text.replace(' UTC', '').replace(' ', 'T')}Z`);
    return Number.isNaN(parsed.getTime()) ? text : parsed.toISOString();
  }
  return text;
}

export class AthenaQuery implements QueryPort {
  readonly tenant: string;
  readonly #client: AthenaClient;
  readonly #options: Required<AthenaQueryOptions>;

  constructor(client: AthenaClient, options: AthenaQueryOptions, tenant: string = ATHENA_ROOT_TENANT) {
    this.#client = client;
    this.#options = { poll: ATHENA_POLL_POLICY, ...options };
    this.tenant = tenant;
  }

  /** From `FLYWHEEL_ATHENA_WORKGROUP` and `FLYWHEEL_GLUE_DATABASE`; a `ConfigurationError` names whichever is missing. */
  static fromEnv(env: Record<string, string | undefined> = process.env, client: AthenaClient = new AthenaClient({})): AthenaQuery {
    const missing = Object.values(ATHENA_QUERY_ENV).filter((name) => !env[name]);
    if (missing.length > 0) throw new ConfigurationError(`Missing environment variable${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`);
    return new AthenaQuery(client, { workGroup: env[ATHENA_QUERY_ENV.workGroup]!, database: env[ATHENA_QUERY_ENV.database]! });
  }

  forTenant(tenant: string): QueryPort {
    if (tenant === '') throw new QueryError('a query view needs a tenant');
    return new AthenaQuery(this.#client, this.#options, tenant);
  }

  async run(sql: string): Promise<QueryResult> {
    const started = performance.now();
    const { QueryExecutionId: id } = await this.#client
      .send(
        new StartQueryExecutionCommand({
          QueryString: sql,
          WorkGroup: this.#options.workGroup,
          QueryExecutionContext: { Database: this.#options.database },
        }),
      )
      .catch((error: unknown) => {
        // Athena refuses some bad SQL (and a missing workgroup) at the start; throttling stays the SDK's error.
        if (error instanceof InvalidRequestException) throw new QueryError(`Athena refused the query: ${error.message}`, { cause: error });
        throw error;
      });
    if (!id) throw new QueryError('Athena started no query execution (no QueryExecutionId)');
    const execution = await this.#waitForEnd(id);
    const rows = await this.#readResults(id);
    const scanned = execution.Statistics?.DataScannedInBytes;
    return { rows, engine: 'athena', ms: performance.now() - started, ...(scanned === undefined ? {} : { scannedBytes: scanned }) };
  }

  async #waitForEnd(id: string): Promise<QueryExecution> {
    const { firstDelayMs, backoffRate, maxDelayMs, timeoutMs } = this.#options.poll;
    let delay = firstDelayMs;
    let waited = 0;
    for (;;) {
      const { QueryExecution: execution } = await this.#client.send(new GetQueryExecutionCommand({ QueryExecutionId: id }));
      const state = execution?.Status?.State;
      if (state === 'SUCCEEDED') return execution!;
      if (state === 'FAILED' || state === 'CANCELLED') {
        const reason = execution?.Status?.StateChangeReason ?? execution?.Status?.AthenaError?.ErrorMessage ?? 'no reason given';
        throw new QueryError(`Athena query ${id} ${state}: ${reason}`);
      }
      if (waited >= timeoutMs) {
        await this.#client.send(new StopQueryExecutionCommand({ QueryExecutionId: id })).catch(() => undefined);
        throw new QueryError(`Athena query ${id} still ${state ?? 'unknown'} after ${Math.round(waited / 1000)} s: stopped`);
      }
      const pause = Math.min(delay, timeoutMs - waited);
      await new Promise((resolve) => setTimeout(resolve, pause));
      waited += pause;
      delay = Math.min(delay * backoffRate, maxDelayMs);
    }
  }

  async #readResults(id: string): Promise<QueryRow[]> {
    const rows: QueryRow[] = [];
    let columns: ColumnInfo[] | undefined;
    let token: string | undefined;
    let first = true;
    do {
      const page: GetQueryResultsCommandOutput = await this.#client.send(
        new GetQueryResultsCommand({ QueryExecutionId: id, MaxResults: ATHENA_RESULTS_PAGE_SIZE, ...(token ? { NextToken: token } : {}) }),
      );
      columns ??= page.ResultSet?.ResultSetMetadata?.ColumnInfo ?? [];
      const pageRows = page.ResultSet?.Rows ?? [];
      // A SELECT's first row on the first page is the header (the column labels), not data.
      for (const row of first ? pageRows.slice(1) : pageRows) {
        const out: QueryRow = {};
        columns.forEach((column, i) => {
          const name = column.Label ?? column.Name ?? `_col${i}`;
          out[name] = athenaValue(row.Data?.[i]?.VarCharValue, column.Type);
        });
        rows.push(out);
      }
      first = false;
      token = page.NextToken;
    } while (token);
    return rows;
  }
}
