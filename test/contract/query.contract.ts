/**
 * What the query port promises, on every driver: one SQL text over the archive's tables (`metric_events`,
 * `exposures`, partitioned by `tenant` and `dt`) answers with rows whose numbers are JS numbers (counts, sums,
 * decimals), whose NULLs are `null`, whose timestamps are ISO strings and dates `YYYY-MM-DD`; a tenant's view names
 * its tenant; an engine's refusal is a `QueryError`.
 *
 * Which cases each driver runs, and why:
 * - `SHARED_CASES` run on both. DuckDB runs their SQL over real JSON Lines files that the harness writes through the
 *   local blobs driver. moto runs no SQL, so on Athena the harness seeds the answer Athena gives for that SQL (every
 *   cell as text, the column types beside it, a header row first) through moto's API: what is checked there is the
 *   driver's side of the wire (start, poll, read the pages, skip the header, convert by type), not the SQL.
 * - The engine cases (`runsSql: true`, DuckDB only) need an engine that reads files: an empty archive, files that
 *   arrive after the first query, `dt` pruning, rows with missing or extra fields, bad SQL. Athena's own refusals
 *   (FAILED with a reason, CANCELLED, a refused start) and its pagination are in query.test.ts, on moto and on an
 *   HTTP stand-in that speaks Athena's protocol (moto never fails a query and returns one page).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { ExposureRow, MetricRow } from '../../lib/experiments/schemas.ts';
import { QUERY_FAILED, QueryError, type QueryPort, type QueryRow } from '../../lib/ports/query.ts';

/** Athena's names for the column types of an answer (what ColumnInfo.Type says). */
export type AthenaColumnType = 'varchar' | 'bigint' | 'integer' | 'double' | 'decimal' | 'boolean' | 'timestamp' | 'date';

/** One archive object: `raw/<metrics|exposures>/tenant=<tenant>/dt=<dt>/<name>.jsonl`. */
export interface ArchiveFile {
  table: 'metrics' | 'exposures';
  tenant: string;
  dt: string;
  name: string;
  /** One JSON object per line; a string is written as is (a malformed line, a half-written object). */
  lines: Array<MetricRow | ExposureRow | Record<string, unknown> | string>;
}

/** What the query answers: its columns in order (with Athena's types) and its rows. */
export interface ExpectedAnswer {
  columns: Array<{ name: string; type: AthenaColumnType }>;
  rows: QueryRow[];
}

export interface QueryUnderTest {
  /** The root view (tenant `default`). */
  query: QueryPort;
  /**
   * Makes the archive hold `files` (DuckDB: written through the blobs driver, so added to what earlier calls wrote)
   * or, where the engine runs no SQL (Athena on moto), makes the next query answer `expected`.
   */
  arrange(files: ArchiveFile[], expected: ExpectedAnswer): Promise<void>;
}

export interface QueryContractOptions {
  /** The engine runs the SQL over the files (DuckDB): the engine cases run too. */
  runsSql: boolean;
}

const T0 = '2026-12-01T10:00:00.000Z';

function metric(id: string, over: Partial<MetricRow> = {}): MetricRow {
  return {
    id,
    metric: 'latency_ms',
    value: 100,
    scope: 'turn',
    user_id: 'u1',
    workspace_id: null,
    model: 'ckpt-a',
    experiment: 'exp-1',
    arm: 'control',
    session_id: null,
    turn_id: null,
    occurred_at: T0,
    received_at: T0,
    ...over,
  };
}

function exposure(id: string, over: Partial<ExposureRow> = {}): ExposureRow {
  return {
    id,
    experiment: 'exp-1',
    arm: 'control',
    checkpoint: 'ckpt-a',
    unit_type: 'user',
    unit_id: 'u1',
    session_id: null,
    turn_id: null,
    occurred_at: T0,
    received_at: T0,
    ...over,
  };
}

interface QueryCase {
  name: string;
  files: ArchiveFile[];
  sql: (query: QueryPort) => string;
  expected: ExpectedAnswer;
  /** Which view runs it (default: the root view). */
  tenant?: string;
}

/** Cases both drivers run (see the header). Each SQL keeps to what Trino and DuckDB both read. */
export const SHARED_CASES: QueryCase[] = [
  {
    name: 'counts and sums per group come back as numbers, in the order asked',
    files: [
      {
        table: 'exposures',
        tenant: 'default',
        dt: '2026-12-01',
        name: 'e1',
        lines: [
          exposure('x1', { arm: 'control', unit_id: 'u1' }),
          exposure('x2', { arm: 'control', unit_id: 'u1' }),
          exposure('x3', { arm: 'control', unit_id: 'u2' }),
          exposure('x4', { arm: 'treatment', checkpoint: 'ckpt-b', unit_id: 'u3' }),
        ],
      },
      {
        table: 'exposures',
        tenant: 'default',
        dt: '2026-12-02',
        name: 'e2',
        lines: [exposure('x5', { arm: 'treatment', checkpoint: 'ckpt-b', unit_id: 'u4', occurred_at: '2026-12-02T09:00:00.000Z' })],
      },
    ],
    sql: (q) =>
      `SELECT arm, count(*) AS exposures, count(DISTINCT unit_id) AS units, count(DISTINCT dt) AS days FROM exposures ` +
      `WHERE tenant = '${q.tenant}' AND experiment = 'exp-1' GROUP BY arm ORDER BY arm`,
    expected: {
      columns: [
        { name: 'arm', type: 'varchar' },
        { name: 'exposures', type: 'bigint' },
        { name: 'units', type: 'bigint' },
        { name: 'days', type: 'bigint' },
      ],
      rows: [
        { arm: 'control', exposures: 3, units: 2, days: 1 },
        { arm: 'treatment', exposures: 2, units: 2, days: 2 },
      ],
    },
  },
  {
    name: 'per-unit aggregation joined to the first exposure (the analyses\' shape), sums of squares included',
    files: [
      {
        table: 'exposures',
        tenant: 'default',
        dt: '2026-12-01',
        name: 'e1',
        lines: [
          exposure('x1', { arm: 'control', unit_id: 'u1', occurred_at: '2026-12-01T10:00:00.000Z' }),
          exposure('x2', { arm: 'treatment', checkpoint: 'ckpt-b', unit_id: 'u2', occurred_at: '2026-12-01T10:00:00.000Z' }),
        ],
      },
      {
        table: 'metrics',
        tenant: 'default',
        dt: '2026-12-01',
        name: 'm1',
        lines: [
          metric('m1', { user_id: 'u1', value: 100, occurred_at: '2026-12-01T10:01:00.000Z' }),
          metric('m2', { user_id: 'u1', value: 300, occurred_at: '2026-12-01T10:02:00.000Z' }),
          // Before u1's first exposure: not counted.
          metric('m3', { user_id: 'u1', value: 5000, occurred_at: '2026-12-01T09:00:00.000Z' }),
          metric('m4', { user_id: 'u2', value: 50.5, occurred_at: '2026-12-01T10:03:00.000Z' }),
          metric('m5', { user_id: 'u2', metric: 'tokens', value: 7, occurred_at: '2026-12-01T10:03:00.000Z' }),
        ],
      },
    ],
    sql: (q) =>
      `WITH first_exposure AS (SELECT unit_id, min(arm) AS arm, min(occurred_at) AS entered FROM exposures ` +
      `WHERE tenant = '${q.tenant}' AND experiment = 'exp-1' GROUP BY unit_id), ` +
      `per_unit AS (SELECT f.unit_id, f.arm, sum(CASE WHEN m.metric = 'latency_ms' AND m.occurred_at >= f.entered THEN m.value ELSE 0 END) AS x ` +
      `FROM first_exposure f LEFT JOIN metric_events m ON m.user_id = f.unit_id AND m.tenant = '${q.tenant}' GROUP BY f.unit_id, f.arm) ` +
      `SELECT arm, count(*) AS units, sum(x) AS sum_x, sum(x * x) AS sum_x2 FROM per_unit GROUP BY arm ORDER BY arm`,
    expected: {
      columns: [
        { name: 'arm', type: 'varchar' },
        { name: 'units', type: 'bigint' },
        { name: 'sum_x', type: 'double' },
        { name: 'sum_x2', type: 'double' },
      ],
      rows: [
        { arm: 'control', units: 1, sum_x: 400, sum_x2: 160000 },
        { arm: 'treatment', units: 1, sum_x: 50.5, sum_x2: 2550.25 },
      ],
    },
  },
  {
    name: 'NULLs: a missing value sums as nothing, counts only what is there, and comes back as null',
    files: [
      {
        table: 'metrics',
        tenant: 'default',
        dt: '2026-12-01',
        name: 'm1',
        lines: [
          metric('m1', { metric: 'cost_usd', value: 0.25 }),
          metric('m2', { metric: 'cost_usd', arm: null, experiment: null }),
          { ...metric('m3', { metric: 'cost_usd' }), value: null },
        ],
      },
    ],
    sql: (q) =>
      `SELECT arm, count(*) AS n, count(value) AS with_value, sum(value) AS total, max(workspace_id) AS workspace FROM metric_events ` +
      `WHERE tenant = '${q.tenant}' AND metric = 'cost_usd' GROUP BY arm ORDER BY arm NULLS LAST`,
    expected: {
      columns: [
        { name: 'arm', type: 'varchar' },
        { name: 'n', type: 'bigint' },
        { name: 'with_value', type: 'bigint' },
        { name: 'total', type: 'double' },
        { name: 'workspace', type: 'varchar' },
      ],
      rows: [
        { arm: 'control', n: 2, with_value: 1, total: 0.25, workspace: null },
        { arm: null, n: 1, with_value: 1, total: 100, workspace: null },
      ],
    },
  },
  {
    name: 'a tenant\'s view reads its own partition only',
    tenant: 'acme',
    files: [
      { table: 'exposures', tenant: 'acme', dt: '2026-12-01', name: 'a', lines: [exposure('a1', { unit_id: 'acme-u1' }), exposure('a2', { unit_id: 'acme-u2' })] },
      { table: 'exposures', tenant: 'default', dt: '2026-12-01', name: 'd', lines: [exposure('d1', { unit_id: 'default-u1' })] },
      { table: 'exposures', tenant: 'globex', dt: '2026-12-01', name: 'g', lines: [exposure('g1', { unit_id: 'globex-u1' })] },
    ],
    sql: (q) => `SELECT tenant, unit_id FROM exposures WHERE tenant = '${q.tenant}' ORDER BY unit_id`,
    expected: {
      columns: [
        { name: 'tenant', type: 'varchar' },
        { name: 'unit_id', type: 'varchar' },
      ],
      rows: [
        { tenant: 'acme', unit_id: 'acme-u1' },
        { tenant: 'acme', unit_id: 'acme-u2' },
      ],
    },
  },
  {
    name: 'types: decimal and integer as numbers, booleans, timestamps as ISO strings, dates as YYYY-MM-DD, strings kept',
    files: [{ table: 'metrics', tenant: 'default', dt: '2026-12-01', name: 'm1', lines: [metric('m1', { value: 12.75, model: 'ckpt-ü 😀' })] }],
    // Not 12.5: DuckDB casts a half to even (12), Trino away from zero (13); SQL that both read rounds explicitly.
    sql: (q) =>
      `SELECT model, CAST(value AS DECIMAL(10, 2)) AS amount, CAST(value AS INTEGER) AS whole, value > 10 AS big, ` +
      `CAST(dt AS DATE) AS day, CAST(TIMESTAMP '2026-12-01 10:00:00.250' AS TIMESTAMP) AS at FROM metric_events WHERE tenant = '${q.tenant}'`,
    expected: {
      columns: [
        { name: 'model', type: 'varchar' },
        { name: 'amount', type: 'decimal' },
        { name: 'whole', type: 'integer' },
        { name: 'big', type: 'boolean' },
        { name: 'day', type: 'date' },
        { name: 'at', type: 'timestamp' },
      ],
      rows: [{ model: 'ckpt-ü 😀', amount: 12.75, whole: 13, big: true, day: '2026-12-01', at: '2026-12-01T10:00:00.250Z' }],
    },
  },
  {
    name: 'an empty answer is an empty list',
    files: [],
    sql: (q) => `SELECT arm, count(*) AS n FROM exposures WHERE tenant = '${q.tenant}' AND experiment = 'no-such' GROUP BY arm`,
    expected: {
      columns: [
        { name: 'arm', type: 'varchar' },
        { name: 'n', type: 'bigint' },
      ],
      rows: [],
    },
  },
];

export function describeQueryContract(name: string, options: QueryContractOptions, make: () => Promise<QueryUnderTest>): void {
  describe(`query contract: ${name}`, () => {
    let sut: QueryUnderTest;
    beforeEach(async () => {
      sut = await make();
    });

    it('names its tenant: the root view is default, forTenant hands the same engine another tenant', () => {
      expect(sut.query.tenant).toBe('default');
      const acme = sut.query.forTenant('acme');
      expect(acme.tenant).toBe('acme');
      expect(acme.forTenant('default').tenant).toBe('default');
    });

    it.each(SHARED_CASES)('$name', async (c) => {
      await sut.arrange(c.files, c.expected);
      const view = c.tenant ? sut.query.forTenant(c.tenant) : sut.query;
      const result = await view.run(c.sql(view));
      expect(result.rows).toEqual(c.expected.rows);
      for (const row of result.rows) expect(Object.keys(row)).toEqual(c.expected.columns.map((col) => col.name));
      expect(result.ms).toBeGreaterThanOrEqual(0);
    });

    if (!options.runsSql) return;

    it('an empty archive still has both tables with every column, and files that arrive later are read without a restart', async () => {
      const columns = {
        metric_events: 'id, metric, value, scope, user_id, workspace_id, model, experiment, arm, session_id, turn_id, occurred_at, received_at, tenant, dt',
        exposures: 'id, experiment, arm, checkpoint, unit_type, unit_id, session_id, turn_id, occurred_at, received_at, tenant, dt',
      };
      for (const [table, list] of Object.entries(columns)) {
        const empty = await sut.query.run(`SELECT count(*) AS n, count(DISTINCT concat_ws('|', ${list})) AS distinct_rows FROM ${table}`);
        expect(empty.rows).toEqual([{ n: 0, distinct_rows: 0 }]);
      }
      await sut.arrange([{ table: 'metrics', tenant: 'default', dt: '2026-12-03', name: 'late', lines: [metric('late-1'), metric('late-2', { value: 2 })] }], { columns: [], rows: [] });
      const after = await sut.query.run(`SELECT count(*) AS n, sum(value) AS total FROM metric_events WHERE tenant = 'default'`);
      expect(after.rows).toEqual([{ n: 2, total: 102 }]);
      // The other table is still empty, and still answers.
      expect((await sut.query.run(`SELECT count(*) AS n FROM exposures`)).rows).toEqual([{ n: 0 }]);
      await sut.arrange([{ table: 'metrics', tenant: 'default', dt: '2026-12-04', name: 'later', lines: [metric('later-1', { value: 1000 })] }], { columns: [], rows: [] });
      expect((await sut.query.run(`SELECT sum(value) AS total FROM metric_events WHERE tenant = 'default'`)).rows).toEqual([{ total: 1102 }]);
    });

    it('a dt predicate opens only the partitions it names (a corrupt file outside them is never read)', async () => {
      await sut.arrange(
        [
          { table: 'metrics', tenant: 'default', dt: '2026-11-01', name: 'corrupt', lines: ['{"id":"broken","val'] },
          { table: 'metrics', tenant: 'default', dt: '2026-12-01', name: 'good', lines: [metric('g1', { value: 3 })] },
          // A derived-metrics object's name (archiveKeys.derivedMetrics): percent-encoded, read like any other.
          { table: 'metrics', tenant: 'default', dt: '2026-12-01', name: `derived-${encodeURIComponent('failure-modes:sig/1=x')}`, lines: [metric('g2', { value: 4 })] },
          { table: 'metrics', tenant: 'other', dt: '2026-12-01', name: 'corrupt', lines: ['not json at all'] },
        ],
        { columns: [], rows: [] },
      );
      const pruned = await sut.query.run(`SELECT count(*) AS n, sum(value) AS total FROM metric_events WHERE tenant = 'default' AND dt >= '2026-12-01'`);
      expect(pruned.rows).toEqual([{ n: 2, total: 7 }]);
      // The corrupt partitions are really there: a query that reaches them fails, as a QueryError naming the file.
      const whole = sut.query.run(`SELECT count(*) AS n FROM metric_events WHERE tenant = 'default'`);
      await expect(whole).rejects.toBeInstanceOf(QueryError);
      await expect(whole).rejects.toThrow(/corrupt\.jsonl/);
    });

    it('reads rows with fields missing (NULL) or extra (ignored) by the declared columns, never by sniffing', async () => {
      await sut.arrange(
        [
          {
            table: 'exposures',
            tenant: 'default',
            dt: '2026-12-01',
            name: 'odd',
            lines: [
              { id: 'x1', experiment: 'exp-1', arm: 'control', unit_id: 'u1', future_field: { nested: [1, 2] } },
              // A number where a string is declared reads as its text, not as a different column type.
              { id: 'x2', experiment: 'exp-1', arm: 'control', unit_id: 42 },
            ],
          },
        ],
        { columns: [], rows: [] },
      );
      const result = await sut.query.run(`SELECT id, unit_id, checkpoint, session_id FROM exposures WHERE tenant = 'default' ORDER BY id`);
      expect(result.rows).toEqual([
        { id: 'x1', unit_id: 'u1', checkpoint: null, session_id: null },
        { id: 'x2', unit_id: '42', checkpoint: null, session_id: null },
      ]);
    });

    it('bad SQL and a missing table are QueryErrors with the engine\'s message', async () => {
      const syntax = sut.query.run('SELEC arm FROM exposures');
      await expect(syntax).rejects.toBeInstanceOf(QueryError);
      await expect(syntax).rejects.toMatchObject({ name: QUERY_FAILED, message: expect.stringMatching(/syntax error/i) });
      await expect(sut.query.run('SELECT * FROM no_such_table')).rejects.toThrow(/no_such_table/);
      // The engine is still usable afterwards.
      expect((await sut.query.run('SELECT 1 + 1 AS two')).rows).toEqual([{ two: 2 }]);
    });
  });
}
