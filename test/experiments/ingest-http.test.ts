/**
 * Online metrics and exposures over real HTTP through the local runtime (key check, scopes, tenant ports, the ingest
 * queue and its processor): every bad field named with its item's path, duplicates inside a request and across
 * requests stored once, rows in the raw archive under `tenant=<t>/dt=<day>/` as the Glue tables and DuckDB read them,
 * a batch too large for one queue message, and a tenant key's rows in its own partition. The processor's crash
 * recovery and the `feedback.thumb` rows are in `ingest-processor.test.ts`.
 */
import { describe, expect, it } from 'vitest';
import { createApiKey } from '../../lib/auth/api-keys.ts';
import type { LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { EXPERIMENT_LIMITS, EXPOSURE_ROW_COLUMNS, METRIC_ROW_COLUMNS } from '../../lib/experiments/schemas.ts';
import { waitFor } from '../support/wait-for.ts';
import { useLocalRuntime } from '../judges/support/http-runtime.ts';

const { start } = useLocalRuntime('flywheel-experiments-ingest-');

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();
const day = (iso: string) => new Date(iso).toISOString().slice(0, 10);

let n = 0;
const metric = (overrides: Record<string, unknown> = {}) => ({
  metricEventId: `m-${++n}`,
  metric: 'latency_ms',
  value: 800 + n,
  userId: 'u-1',
  model: 'ckpt-b',
  experiment: 'exp-1',
  arm: 'b',
  sessionId: 's-1',
  turnId: `t-${n}`,
  occurredAt: minutesAgo(1),
  ...overrides,
});
const exposure = (overrides: Record<string, unknown> = {}) => ({
  exposureId: `x-${++n}`,
  experiment: 'exp-1',
  arm: 'b',
  checkpoint: 'ckpt-b',
  unitType: 'user',
  unitId: 'u-1',
  occurredAt: minutesAgo(1),
  ...overrides,
});

/** Every row of the JSON Lines objects under `prefix`, with the object it came from. */
async function rowsUnder(side: LocalPorts, prefix: string): Promise<Array<Record<string, any> & { _key: string }>> {
  const out: Array<Record<string, any> & { _key: string }> = [];
  let cursor: string | undefined;
  do {
    const page = await side.blobs.list(prefix, cursor ? { cursor } : {});
    for (const key of page.keys) {
      const text = Buffer.from((await side.blobs.get(key))!).toString('utf8');
      for (const line of text.split('\n')) if (line !== '') out.push({ ...JSON.parse(line), _key: key });
    }
    cursor = page.cursor;
  } while (cursor);
  return out;
}

/** Waits until the ingest queue holds nothing, waiting or in flight: every message sent so far is processed. */
async function drained(side: LocalPorts): Promise<void> {
  await waitFor(
    async () => {
      const d = await side.ingestQueue.depth();
      return d.visible === 0 && d.inFlight === 0 ? true : undefined;
    },
    { what: 'the ingest queue to drain' },
  );
}

describe('POST /v1/metrics', () => {
  it('answers per item naming every bad field, archives the accepted ones as rows, and stores a resent id once', async () => {
    const { call, side } = await start();
    const twoDaysAgo = minutesAgo(2 * 24 * 60);
    const good = [metric({ metricEventId: 'lat-1', value: 812.5 }), metric({ metricEventId: 'lat-2', occurredAt: twoDaysAgo.replace('Z', '+00:00'), workspaceId: 'w-9', scope: 'session' })];
    const res = await call('POST', '/v1/metrics', {
      metrics: [
        good[0],
        metric({ value: 'fast' }),
        metric({ occurredAt: minutesAgo(36 * 24 * 60) }),
        metric({ occurredAt: new Date(Date.now() + 60 * 60_000).toISOString() }),
        metric({ metric: 'Latency MS', extra: 1 }),
        metric({ metricEventId: 'lat-1' }),
        good[1],
        metric({ userId: 'u#1', scope: 'day' }),
      ],
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ accepted: 2, duplicates: 1, rejected: 5 });
    expect(res.body.results.map((r: any) => r.status)).toEqual(['accepted', 'rejected', 'rejected', 'rejected', 'rejected', 'duplicate', 'accepted', 'rejected']);
    expect(res.body.results[0]).toEqual({ index: 0, metricEventId: 'lat-1', status: 'accepted' });
    const pathsOf = (i: number) => res.body.results[i].issues.map((x: any) => x.path).sort();
    expect(pathsOf(1)).toEqual(['metrics[1].value']);
    expect(res.body.results[2].issues).toEqual([{ path: 'metrics[2].occurredAt', message: `is more than ${EXPERIMENT_LIMITS.occurredAtMaxPastMs / 86_400_000} days in the past` }]);
    expect(res.body.results[3].issues).toEqual([{ path: 'metrics[3].occurredAt', message: expect.stringContaining('ahead of the server clock') }]);
    // An unknown field is named where it is, like any other.
    expect(pathsOf(4)).toEqual(['metrics[4].extra', 'metrics[4].metric']);
    expect(pathsOf(7)).toEqual(['metrics[7].scope', 'metrics[7].userId']);

    await drained(side);
    const rows = await rowsUnder(side, 'raw/metrics/tenant=default/');
    expect(rows.map((r) => r.id).sort()).toEqual(['lat-1', 'lat-2']);
    const byId = new Map(rows.map((r) => [r.id, r]));
    const first = byId.get('lat-1')!;
    // Every column, in the declared order, snake_case, absent fields as null: the tables' shape.
    expect(Object.keys(first).filter((k) => k !== '_key')).toEqual([...METRIC_ROW_COLUMNS]);
    expect(first).toMatchObject({ metric: 'latency_ms', value: 812.5, scope: 'turn', user_id: 'u-1', workspace_id: null, model: 'ckpt-b', experiment: 'exp-1', arm: 'b', session_id: 's-1' });
    expect(first._key).toBe(`raw/metrics/tenant=default/dt=${day(first.occurred_at)}/${res.body.ingestId}.jsonl`);
    expect(Date.parse(first.received_at)).toBeGreaterThanOrEqual(Date.parse(first.occurred_at));
    // The day partition is the UTC day of occurredAt, normalised to UTC: one object per day per request.
    const second = byId.get('lat-2')!;
    expect(second).toMatchObject({ occurred_at: new Date(twoDaysAgo).toISOString(), workspace_id: 'w-9', scope: 'session' });
    expect(second._key).toBe(`raw/metrics/tenant=default/dt=${day(twoDaysAgo)}/${res.body.ingestId}.jsonl`);
    // The seen-markers carry the request that stored them.
    expect(await side.records.get('METRICEVENT#lat-1', 'SEEN')).toMatchObject({ ingestId: res.body.ingestId });

    // The same ids again (a client retry), beside a new one: stored once each.
    const again = await call('POST', '/v1/metrics', { metrics: [good[0], good[1], metric({ metricEventId: 'lat-3' })] });
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ accepted: 3, duplicates: 0, rejected: 0 });
    await drained(side);
    const after = await rowsUnder(side, 'raw/metrics/tenant=default/');
    expect(after.map((r) => r.id).sort()).toEqual(['lat-1', 'lat-2', 'lat-3']);
    expect(after.find((r) => r.id === 'lat-3')!._key).toContain(again.body.ingestId);
  });

  it('refuses a malformed request as a whole with 400, 413 or 415, naming the field', async () => {
    const { call, runtime } = await start();
    const single = await call('POST', '/v1/metrics', metric({ value: null, model: '' }));
    expect(single.status).toBe(400);
    expect(single.body.issues.map((i: any) => i.path).sort()).toEqual(['model', 'value']);
    const allBad = await call('POST', '/v1/metrics', { metrics: [metric({ metric: 7 }), { nonsense: true }] });
    expect(allBad.status).toBe(400);
    expect(allBad.body).toMatchObject({ accepted: 0, rejected: 2 });
    expect(allBad.body.issues.map((i: any) => i.path)).toContain('metrics[1].metricEventId');
    const tooMany = await call('POST', '/v1/metrics', { metrics: Array.from({ length: EXPERIMENT_LIMITS.batchMaxItems + 1 }, () => metric()) });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.issues).toEqual([{ path: 'metrics', message: expect.stringContaining('500') }]);
    const notArray = await call('POST', '/v1/metrics', { metrics: 'lots' });
    expect(notArray.status).toBe(400);
    expect(notArray.body.issues[0].path).toBe('metrics');
    const huge = await fetch(`${runtime.url}/v1/metrics`, {
      method: 'POST',
      headers: { 'x-api-key': runtime.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ metrics: [metric({ pad: 'x'.repeat(3 * 1024 * 1024) })] }),
    });
    expect(huge.status).toBe(413);
    const text = await fetch(`${runtime.url}/v1/metrics`, { method: 'POST', headers: { 'x-api-key': runtime.apiKey, 'content-type': 'text/plain' }, body: 'latency=1' });
    expect(text.status).toBe(415);
  });

  it('stores a batch of 500 too large for one queue message (spooled to blobs) without losing an item', async () => {
    const { call, side } = await start();
    const long = 'v'.repeat(200);
    const metrics = Array.from({ length: EXPERIMENT_LIMITS.batchMaxItems }, (_, i) => metric({ metricEventId: `big-${i}`, userId: `u-${i % 37}-${long}`, model: `ckpt-${long}`, sessionId: `s-${long}`, turnId: `t-${i}-${long}` }));
    const res = await call('POST', '/v1/metrics', { metrics });
    expect(res.status).toBe(202);
    expect(res.body.accepted).toBe(500);
    await drained(side);
    const rows = await rowsUnder(side, 'raw/metrics/tenant=default/');
    expect(rows).toHaveLength(500);
    expect(new Set(rows.map((r) => r.id)).size).toBe(500);
    expect((await side.blobs.list('spool/ingest/')).keys).toEqual([`spool/ingest/${res.body.ingestId}.json`]);
  });
});

describe('POST /v1/exposures', () => {
  it('archives exposures under raw/exposures, idempotent by exposureId, and names bad fields', async () => {
    const { call, side } = await start();
    const res = await call('POST', '/v1/exposures', {
      exposures: [exposure({ exposureId: 'x-a', sessionId: 's-7', turnId: 't-7' }), exposure({ exposureId: 'x-b', unitType: 'workspace', unitId: 'w-1', arm: 'control', checkpoint: 'ckpt-a' }), exposure({ unitType: 'team', arm: 'has space' })],
    });
    expect(res.status).toBe(202);
    expect(res.body.results[2].issues.map((i: any) => i.path).sort()).toEqual(['exposures[2].arm', 'exposures[2].unitType']);
    const single = await call('POST', '/v1/exposures', exposure({ exposureId: 'x-a' }));
    expect(single.status).toBe(202);
    await drained(side);
    const rows = await rowsUnder(side, 'raw/exposures/tenant=default/');
    expect(rows.map((r) => r.id).sort()).toEqual(['x-a', 'x-b']);
    const a = rows.find((r) => r.id === 'x-a')!;
    expect(Object.keys(a).filter((k) => k !== '_key')).toEqual([...EXPOSURE_ROW_COLUMNS]);
    expect(a).toMatchObject({ experiment: 'exp-1', arm: 'b', checkpoint: 'ckpt-b', unit_type: 'user', unit_id: 'u-1', session_id: 's-7', turn_id: 't-7' });
    expect(a._key).toBe(`raw/exposures/tenant=default/dt=${day(a.occurred_at)}/${res.body.ingestId}.jsonl`);
    expect(rows.find((r) => r.id === 'x-b')).toMatchObject({ unit_type: 'workspace', unit_id: 'w-1', session_id: null, turn_id: null });
  });
});

describe('tenants', () => {
  it("writes a tenant key's rows under tenant=<t> of the root archive and its markers in its own partition; a read key may not post", async () => {
    const { side, runtime } = await start();
    const { key } = await createApiKey(side.records, { tenant: 'acme', scopes: 'ingest' }, new Date());
    const { key: readKey } = await createApiKey(side.records, { tenant: 'acme', scopes: 'read' }, new Date());
    const post = (path: string, body: unknown, apiKey: string) =>
      fetch(`${runtime.url}${path}`, { method: 'POST', headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await post('/v1/metrics', metric({ metricEventId: 'acme-1' }), key)).status).toBe(202);
    expect((await post('/v1/exposures', exposure({ exposureId: 'acme-x' }), key)).status).toBe(202);
    expect((await post('/v1/metrics', metric({ metricEventId: 'acme-2' }), readKey)).status).toBe(403);
    await drained(side);
    expect((await rowsUnder(side, 'raw/metrics/tenant=acme/')).map((r) => r.id)).toEqual(['acme-1']);
    expect((await rowsUnder(side, 'raw/exposures/tenant=acme/')).map((r) => r.id)).toEqual(['acme-x']);
    expect(await rowsUnder(side, 'raw/metrics/tenant=default/')).toEqual([]);
    expect((await side.blobs.list('tenants/acme/raw/')).keys).toEqual([]);
    expect(await side.records.get('T#acme#METRICEVENT#acme-1', 'SEEN')).toBeDefined();
    expect(await side.records.get('METRICEVENT#acme-1', 'SEEN')).toBeUndefined();
  });
});
