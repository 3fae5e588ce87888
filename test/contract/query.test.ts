import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AthenaClient,
  CreateWorkGroupCommand,
  GetQueryExecutionCommand,
  ListQueryExecutionsCommand,
} from '@aws-sdk/client-athena';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { scopePortsToTenant } from '../../lib/auth/tenant-ports.ts';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { ATHENA_QUERY_ENV, AthenaQuery, athenaValue, type AthenaPollPolicy } from '../../lib/drivers/aws/athena-query.ts';
import { DuckDbQuery } from '../../lib/drivers/local/duckdb-query.ts';
import { FsBlobs } from '../../lib/drivers/local/fs-blobs.ts';
import { archiveKeys } from '../../lib/experiments/record-keys.ts';
import { ConfigurationError } from '../../lib/errors.ts';
import { QUERY_FAILED, QueryError } from '../../lib/ports/query.ts';
import { motoEndpoint, uniqueName } from '../support/aws-test-resources.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import { waitFor } from '../support/wait-for.ts';
import { startAthenaStandIn, type AthenaStandIn } from './athena-stand-in.ts';
import { describeQueryContract, type ArchiveFile, type ExpectedAnswer } from './query.contract.ts';

const tempDir = tempDirs('flywheel-query-');

// ---------------------------------------------------------------------------------------------------------------
// DuckDB over real files written by the local blobs driver
// ---------------------------------------------------------------------------------------------------------------

const opened: DuckDbQuery[] = [];
afterAll(async () => {
  for (const q of opened.splice(0)) await q.close();
});

function archiveKey(file: ArchiveFile): string {
  return (file.table === 'metrics' ? archiveKeys.metrics : archiveKeys.exposures)(file.tenant, file.dt, file.name);
}

describeQueryContract('DuckDB over the local archive', { runsSql: true }, async () => {
  const root = tempDir();
  const blobs = new FsBlobs(root, { fsync: false });
  const query = new DuckDbQuery(root);
  opened.push(query);
  return {
    query,
    arrange: async (files) => {
      for (const file of files) {
        await blobs.put(archiveKey(file), file.lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n');
      }
    },
  };
});

describe('DuckDB query driver', () => {
  it('never sees a half-written object: the blobs driver writes it outside raw/ and renames it in', async () => {
    const root = tempDir();
    const blobs = new FsBlobs(root, { fsync: false });
    const query = await DuckDbQuery.open(root);
    opened.push(query);
    await blobs.put(archiveKeys.exposures('default', '2026-12-01', 'whole'), `${JSON.stringify({ id: 'x1', experiment: 'e', arm: 'a', unit_id: 'u1' })}\n`);
    // What a crash mid-write leaves: a partial object in the blobs driver's temporary folder.
    mkdirSync(join(root, '.flywheel-tmp'), { recursive: true });
    writeFileSync(join(root, '.flywheel-tmp', 'crashed-write'), '{"id":"x2","experiment":"e","ar');
    expect((await query.run(`SELECT count(*) AS n FROM exposures WHERE tenant = 'default'`)).rows).toEqual([{ n: 1 }]);
    // Objects land whole while queries run.
    const writes = Array.from({ length: 20 }, (_, i) =>
      blobs.put(archiveKeys.exposures('default', '2026-12-02', `w${i}`), `${JSON.stringify({ id: `w${i}`, experiment: 'e', arm: 'a', unit_id: `u${i}` })}\n`),
    );
    const during = await query.run(`SELECT count(*) AS n FROM exposures WHERE tenant = 'default'`);
    expect(during.rows[0]!.n).toBeGreaterThanOrEqual(1);
    await Promise.all(writes);
    expect((await query.run(`SELECT count(*) AS n FROM exposures WHERE tenant = 'default'`)).rows).toEqual([{ n: 21 }]);
  });

  it('HUGEINT sums and wide DECIMALs are numbers, lists and structs JSON text, DATE a day', async () => {
    const query = new DuckDbQuery(tempDir());
    opened.push(query);
    const { rows } = await query.run(
      `SELECT sum(x) AS huge, CAST(1234567.891 AS DECIMAL(38, 3)) AS wide, [1, 2] AS list, {'a': 1} AS struct, DATE '2026-12-04' AS day ` +
        `FROM (SELECT CAST(range AS BIGINT) * 1000000000 AS x FROM range(3))`,
    );
    expect(rows).toEqual([{ huge: 3_000_000_000, wide: 1234567.891, list: '[1,2]', struct: '{"a":1}', day: '2026-12-04' }]);
  });

  it('answers again with the empty view when the archive is emptied under it', async () => {
    const root = tempDir();
    const blobs = new FsBlobs(root, { fsync: false });
    const query = new DuckDbQuery(root);
    opened.push(query);
    const key = archiveKeys.metrics('default', '2026-12-01', 'only');
    await blobs.put(key, `${JSON.stringify({ id: 'm1', metric: 'x', value: 1 })}\n`);
    expect((await query.run('SELECT count(*) AS n FROM metric_events')).rows).toEqual([{ n: 1 }]);
    await blobs.delete(key);
    expect((await query.run('SELECT count(*) AS n FROM metric_events')).rows).toEqual([{ n: 0 }]);
  });

  it('runs queries side by side on one database, and close waits for them', async () => {
    const root = tempDir();
    const blobs = new FsBlobs(root, { fsync: false });
    const rows = Array.from({ length: 5000 }, (_, i) => JSON.stringify({ id: `m${i}`, metric: 'latency_ms', value: i, user_id: `u${i % 50}` })).join('\n');
    await blobs.put(archiveKeys.metrics('default', '2026-12-01', 'big'), `${rows}\n`);
    const query = new DuckDbQuery(root);
    const acme = query.forTenant('acme');
    expect(query.forTenant('acme')).toBe(acme);
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => (i % 2 ? acme : query).run(`SELECT count(DISTINCT user_id) AS users, sum(value) AS total FROM metric_events WHERE tenant = 'default'`)),
    );
    for (const answer of answers) expect(answer.rows).toEqual([{ users: 50, total: (4999 * 5000) / 2 }]);
    const last = query.run(`SELECT count(*) AS n FROM metric_events`);
    await query.close();
    expect((await last).rows).toEqual([{ n: 5000 }]);
    await expect(acme.run('SELECT 1 AS one')).rejects.toBeInstanceOf(QueryError);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Athena on moto: the driver's side of the wire, with answers seeded through moto's API
// ---------------------------------------------------------------------------------------------------------------

/** A region no other test file uses: moto's seeded Athena answers are one queue per account and region. */
const ATHENA_REGION = 'eu-west-3';
const FAST_POLL: AthenaPollPolicy = { firstDelayMs: 5, backoffRate: 2, maxDelayMs: 50, timeoutMs: 20_000 };
const credentials = { accessKeyId: 'testing', secretAccessKey: 'testing' };

function athenaClient(endpoint: string, calls?: string[]): AthenaClient {
  const client = new AthenaClient({ endpoint, region: ATHENA_REGION, credentials, maxAttempts: 1 });
  if (calls) {
    client.middlewareStack.add(
      (next, context) => (args) => {
        calls.push(context.commandName!);
        return next(args);
      },
      { step: 'initialize', name: 'countCalls' },
    );
  }
  return client;
}

async function motoApi(path: string, body: unknown): Promise<void> {
  const response = await fetch(`${motoEndpoint()}${path}`, { method: 'POST', body: JSON.stringify(body) });
  await response.arrayBuffer();
  if (response.status !== 201) throw new Error(`moto ${path} answered ${response.status}`);
}

/** A value as Athena prints it (every cell is text; NULL is a cell without VarCharValue). */
function athenaText(value: unknown, type: string): { VarCharValue?: string } {
  if (value === null || value === undefined) return {};
  if (type === 'timestamp') return { VarCharValue: String(value).replace('T', ' ').replace('Z', '') };
  return { VarCharValue: String(value) };
}

/** The answer Athena gives for a SELECT: a header row of the labels, then the rows. */
function athenaAnswer(expected: ExpectedAnswer) {
  return {
    column_info: expected.columns.map((c) => ({ CatalogName: 'hive', SchemaName: '', TableName: '', Name: c.name, Label: c.name, Type: c.type, Precision: 0, Scale: 0, Nullable: 'UNKNOWN', CaseSensitive: c.type === 'varchar' })),
    rows: [{ Data: expected.columns.map((c) => ({ VarCharValue: c.name })) }, ...expected.rows.map((row) => ({ Data: expected.columns.map((c) => athenaText(row[c.name], c.type)) }))],
  };
}

async function motoWorkGroup(client: AthenaClient): Promise<string> {
  const name = uniqueName('flywheel-wg');
  await client.send(new CreateWorkGroupCommand({ Name: name, Configuration: { ResultConfiguration: { OutputLocation: `s3://${name}-results/athena-results/` } } }));
  return name;
}

describeQueryContract('Athena (moto, answers seeded)', { runsSql: false }, async () => {
  const client = athenaClient(motoEndpoint());
  const workGroup = await motoWorkGroup(client);
  return {
    query: new AthenaQuery(client, { workGroup, database: 'flywheel_archive', poll: FAST_POLL }),
    arrange: (_files, expected) => motoApi('/moto-api/static/athena/query-results', { region: ATHENA_REGION, results: [athenaAnswer(expected)] }),
  };
});

describe('Athena query driver (moto)', () => {
  afterEach(async () => {
    await motoApi('/moto-api/state-manager/unset-transition', { model_name: 'athena::execution' });
  });

  it('starts in the workgroup and database, polls until SUCCEEDED, then reads the result', async () => {
    const calls: string[] = [];
    const client = athenaClient(motoEndpoint(), calls);
    const workGroup = await motoWorkGroup(client);
    // Each execution stays QUEUED for two polls, then RUNNING for two.
    await motoApi('/moto-api/state-manager/set-transition', { model_name: 'athena::execution', transition: { progression: 'manual', times: 2 } });
    await motoApi('/moto-api/static/athena/query-results', {
      region: ATHENA_REGION,
      results: [athenaAnswer({ columns: [{ name: 'n', type: 'bigint' }], rows: [{ n: 7 }] })],
    });
    const query = new AthenaQuery(client, { workGroup, database: 'flywheel_archive', poll: FAST_POLL });
    const sql = `SELECT count(*) AS n FROM exposures WHERE tenant = 'default'`;
    const result = await query.run(sql);
    expect(result).toMatchObject({ engine: 'athena', rows: [{ n: 7 }] });
    expect(calls.filter((c) => c === 'GetQueryExecutionCommand').length).toBeGreaterThanOrEqual(4);
    expect(calls.at(-1)).toBe('GetQueryResultsCommand');
    const [id] = (await client.send(new ListQueryExecutionsCommand({ WorkGroup: workGroup }))).QueryExecutionIds!;
    const execution = (await client.send(new GetQueryExecutionCommand({ QueryExecutionId: id }))).QueryExecution!;
    expect(execution).toMatchObject({ Query: sql, QueryExecutionContext: { Database: 'flywheel_archive' } });
  });

  it('stops a query that outlives the poll policy, and says so as a QueryError', async () => {
    const client = athenaClient(motoEndpoint());
    const workGroup = await motoWorkGroup(client);
    await motoApi('/moto-api/state-manager/set-transition', { model_name: 'athena::execution', transition: { progression: 'manual', times: 1_000_000 } });
    const query = new AthenaQuery(client, { workGroup, database: 'flywheel_archive', poll: { ...FAST_POLL, timeoutMs: 200 } });
    const run = query.run(`SELECT 1 AS one`);
    await expect(run).rejects.toBeInstanceOf(QueryError);
    await expect(run).rejects.toThrow(/still QUEUED after .* stopped/);
    const [id] = (await client.send(new ListQueryExecutionsCommand({ WorkGroup: workGroup }))).QueryExecutionIds!;
    const execution = await waitFor(
      async () => {
        const e = (await client.send(new GetQueryExecutionCommand({ QueryExecutionId: id }))).QueryExecution!;
        return e.Status?.State === 'CANCELLED' ? e : undefined;
      },
      { what: 'the timed-out query to be CANCELLED' },
    );
    expect(execution.QueryExecutionId).toBe(id);
  });

  it('a workgroup that does not exist is refused at the start: a QueryError', async () => {
    const query = new AthenaQuery(athenaClient(motoEndpoint()), { workGroup: uniqueName('missing-wg'), database: 'flywheel_archive', poll: FAST_POLL });
    await expect(query.run('SELECT 1 AS one')).rejects.toMatchObject({ name: QUERY_FAILED, message: expect.stringMatching(/WorkGroup does not exist/) });
  });

  it('fromEnv reads the workgroup and database, and names what is missing', async () => {
    expect(() => AthenaQuery.fromEnv({})).toThrow(ConfigurationError);
    expect(() => AthenaQuery.fromEnv({ [ATHENA_QUERY_ENV.workGroup]: 'wg' })).toThrow(new RegExp(ATHENA_QUERY_ENV.database));
    const client = athenaClient(motoEndpoint());
    const workGroup = await motoWorkGroup(client);
    const query = AthenaQuery.fromEnv({ [ATHENA_QUERY_ENV.workGroup]: workGroup, [ATHENA_QUERY_ENV.database]: 'flywheel_archive' }, client);
    await motoApi('/moto-api/static/athena/query-results', { region: ATHENA_REGION, results: [athenaAnswer({ columns: [{ name: 'ok', type: 'boolean' }], rows: [{ ok: true }] })] });
    expect((await query.forTenant('acme').run(`SELECT true AS ok FROM exposures WHERE tenant = 'acme'`)).rows).toEqual([{ ok: true }]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Athena on an HTTP stand-in: what moto never does (FAILED, pages, bytes scanned)
// ---------------------------------------------------------------------------------------------------------------

describe('Athena query driver (protocol stand-in)', () => {
  let standIn: AthenaStandIn | undefined;
  afterEach(async () => {
    await standIn?.close();
    standIn = undefined;
  });

  const header = (names: string[]) => ({ Data: names.map((n) => ({ VarCharValue: n })) });
  const columns = [
    { Name: 'arm', Label: 'arm', Type: 'varchar' },
    { Name: 'n', Label: 'n', Type: 'bigint' },
    { Name: 'mean', Label: 'mean', Type: 'double' },
  ];

  it('reads every page, skips the header row on the first only, and reports the bytes scanned', async () => {
    standIn = await startAthenaStandIn({
      StartQueryExecution: () => ({ QueryExecutionId: 'q-pages' }),
      GetQueryExecution: (_input, i) => ({
        QueryExecution: { QueryExecutionId: 'q-pages', Status: { State: i < 2 ? 'RUNNING' : 'SUCCEEDED' }, Statistics: { DataScannedInBytes: 123456 } },
      }),
      GetQueryResults: (input) => {
        const page = input.NextToken === undefined ? 0 : Number(input.NextToken);
        const rows = Array.from({ length: 3 }, (_, r) => ({ Data: [{ VarCharValue: `arm-${page}-${r}` }, { VarCharValue: String(page * 3 + r) }, {}] }));
        return {
          ResultSet: { Rows: page === 0 ? [header(['arm', 'n', 'mean']), ...rows] : rows, ResultSetMetadata: { ColumnInfo: columns } },
          ...(page < 2 ? { NextToken: String(page + 1) } : {}),
        };
      },
    });
    const query = new AthenaQuery(new AthenaClient({ endpoint: standIn.url, region: 'us-east-1', credentials }), { workGroup: 'wg', database: 'db', poll: FAST_POLL });
    const result = await query.run('SELECT arm, n, mean FROM t');
    expect(result.scannedBytes).toBe(123456);
    expect(result.rows).toEqual(Array.from({ length: 9 }, (_, i) => ({ arm: `arm-${Math.floor(i / 3)}-${i % 3}`, n: i, mean: null })));
    const pages = standIn.calls.filter((c) => c.operation === 'GetQueryResults');
    expect(pages.map((c) => c.input.NextToken)).toEqual([undefined, '1', '2']);
    expect(pages.every((c) => c.input.MaxResults === 1000)).toBe(true);
    expect(standIn.calls.find((c) => c.operation === 'StartQueryExecution')!.input).toMatchObject({
      QueryString: 'SELECT arm, n, mean FROM t',
      WorkGroup: 'wg',
      QueryExecutionContext: { Database: 'db' },
    });
    expect(standIn.calls.filter((c) => c.operation === 'GetQueryExecution')).toHaveLength(3);
  });

  it('FAILED and CANCELLED are QueryErrors carrying Athena\'s reason; no results are read', async () => {
    for (const [state, reason] of [
      ['FAILED', "COLUMN_NOT_FOUND: line 1:8: Column 'nope' cannot be resolved"],
      ['CANCELLED', 'Query cancelled by user'],
    ] as const) {
      standIn = await startAthenaStandIn({
        StartQueryExecution: () => ({ QueryExecutionId: `q-${state}` }),
        GetQueryExecution: () => ({ QueryExecution: { QueryExecutionId: `q-${state}`, Status: { State: state, StateChangeReason: reason } } }),
      });
      const query = new AthenaQuery(new AthenaClient({ endpoint: standIn.url, region: 'us-east-1', credentials }), { workGroup: 'wg', database: 'db', poll: FAST_POLL });
      const run = query.run('SELECT nope FROM t');
      await expect(run).rejects.toBeInstanceOf(QueryError);
      await expect(run).rejects.toThrow(`Athena query q-${state} ${state}: ${reason}`);
      expect(standIn.calls.some((c) => c.operation === 'GetQueryResults')).toBe(false);
      await standIn.close();
      standIn = undefined;
    }
  });

  it('bad SQL refused at the start is a QueryError; throttling stays the SDK\'s error for the caller to retry', async () => {
    standIn = await startAthenaStandIn({
      StartQueryExecution: (input) =>
        String(input.QueryString).startsWith('SELEC ')
          ? { error: { type: 'InvalidRequestException', message: "line 1:1: mismatched input 'SELEC'" } }
          : { error: { type: 'TooManyRequestsException', message: 'Rate exceeded' } },
    });
    const query = new AthenaQuery(new AthenaClient({ endpoint: standIn.url, region: 'us-east-1', credentials, maxAttempts: 1 }), { workGroup: 'wg', database: 'db', poll: FAST_POLL });
    await expect(query.run('SELEC 1')).rejects.toMatchObject({ name: QUERY_FAILED, message: expect.stringMatching(/mismatched input/) });
    const throttled = query.run('SELECT 1');
    await expect(throttled).rejects.not.toBeInstanceOf(QueryError);
    await expect(throttled).rejects.toMatchObject({ name: 'TooManyRequestsException' });
  });

  it('converts each cell by its column type', () => {
    expect(athenaValue('42', 'bigint')).toBe(42);
    expect(athenaValue('7', 'integer')).toBe(7);
    expect(athenaValue('0.125', 'double')).toBe(0.125);
    expect(athenaValue('12.50', 'decimal(10,2)')).toBe(12.5);
    expect(athenaValue('1.5E-4', 'real')).toBe(0.00015);
    expect(athenaValue('true', 'boolean')).toBe(true);
    expect(athenaValue('false', 'boolean')).toBe(false);
    expect(athenaValue('2026-12-01 10:00:00.250', 'timestamp')).toBe('2026-12-01T10:00:00.250Z');
    expect(athenaValue('2026-12-01 10:00:00.250 UTC', 'timestamp with time zone')).toBe('2026-12-01T10:00:00.250Z');
    expect(athenaValue('2026-12-01', 'date')).toBe('2026-12-01');
    expect(athenaValue('', 'varchar')).toBe('');
    expect(athenaValue(undefined, 'bigint')).toBeNull();
    expect(athenaValue('{a=1}', 'map(varchar,integer)')).toBe('{a=1}');
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Wiring: the local and AWS bundles carry the port, a tenant's view of them carries the tenant's query view
// ---------------------------------------------------------------------------------------------------------------

describe('query port wiring', () => {
  it('openLocalPorts: DuckDB over <dataDir>/blobs, reading what the blobs port archives; a tenant\'s ports query as that tenant', async () => {
    const ports = openLocalPorts(tempDir());
    try {
      await ports.blobs.put(archiveKeys.exposures('acme', '2026-12-01', 'b1'), `${JSON.stringify({ id: 'x1', experiment: 'e', arm: 'a', unit_id: 'u1' })}\n`);
      const acme = scopePortsToTenant(ports, 'acme');
      expect(acme.query?.tenant).toBe('acme');
      expect(scopePortsToTenant(ports, 'default').query).toBe(ports.query);
      const result = await acme.query!.run(`SELECT count(*) AS n FROM exposures WHERE tenant = '${acme.query!.tenant}'`);
      expect(result).toMatchObject({ engine: 'duckdb', rows: [{ n: 1 }] });
    } finally {
      ports.close();
    }
  });

  it('awsPortsFromEnv: Athena when the workgroup and database are set, no query port otherwise', () => {
    const base = {
      FLYWHEEL_TABLE: 't',
      FLYWHEEL_BUCKET: 'b',
      FLYWHEEL_INGEST_QUEUE_URL: 'https://sqs/q',
      FLYWHEEL_INGEST_DLQ_URL: 'https://sqs/d',
      FLYWHEEL_EVENT_BUS: 'bus',
    };
    expect(awsPortsFromEnv(base).query).toBeUndefined();
    const ports = awsPortsFromEnv({ ...base, [ATHENA_QUERY_ENV.workGroup]: 'wg', [ATHENA_QUERY_ENV.database]: 'db' });
    expect(ports.query).toBeInstanceOf(AthenaQuery);
    expect(scopePortsToTenant(ports, 'acme').query?.tenant).toBe('acme');
  });
});
