/**
 * The analysis routes through the dispatcher (the local server's and Lambda's code path) over the local ports and
 * real DuckDB: analyse now (JSON), list snapshots, read a lift PNG; every query field validated with its path; 404,
 * 403 (scope), 503 without a query engine; each tenant's key analyses its own archive only; the routes documented.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDispatcher } from '../../lib/api/dispatch.ts';
import { buildOpenApiDocument } from '../../lib/api/openapi.ts';
import { routes } from '../../lib/api/routes.ts';
import { scopePortsToTenant } from '../../lib/auth/tenant-ports.ts';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { ExperimentAnalysisSchema } from '../../lib/experiments/schemas.ts';
import type { Ports } from '../../lib/ports/ports.ts';
import { apiEvent, asKey } from '../support/lambda-events.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import { declareTestMetrics, simulateArchive, storeRunningExperiment, writeArchive } from './analysis-support.ts';

const tempDir = tempDirs('flywheel-analysis-http-');
const startedAt = new Date('2026-11-20T00:00:00.000Z');
const now = new Date('2026-11-23T00:00:00.000Z');
const simArms = [
  { id: 'control', weight: 1 },
  { id: 'treatment', weight: 1 },
];
const input = {
  id: 'exp-h',
  name: 'http',
  arms: [
    { id: 'control', checkpoint: 'ckpt-a', control: true },
    { id: 'treatment', checkpoint: 'ckpt-b' },
  ],
  metrics: { primary: 'spend', secondary: ['accept_rate'] },
  plannedUnitsPerArm: 500,
};

let ports: LocalPorts;
let dispatch: ReturnType<typeof makeDispatcher>;

beforeAll(async () => {
  ports = openLocalPorts(tempDir(), { now: () => now });
  dispatch = makeDispatcher(routes, ports);
  // Two tenants, one experiment id each, different archives (written through the root blobs port: tenant= partitions).
  for (const [tenant, users] of [
    ['default', 400],
    ['acme', 250],
  ] as const) {
    const view = scopePortsToTenant(ports, tenant);
    await declareTestMetrics(view);
    await storeRunningExperiment(view.records, input, startedAt);
    await writeArchive(ports.blobs, tenant, simulateArchive({ seed: tenant === 'acme' ? 31 : 32, tenant, experimentId: 'exp-h', startedAt, users, arms: simArms }));
  }
});
afterAll(async () => {
  await ports.query.close();
  ports.close();
});

type Key = { tenant: string; scopes: string };
const ADMIN: Key = { tenant: 'default', scopes: 'read,admin' };
async function call(method: string, path: string, query?: Record<string, string>, key: Key = ADMIN, via = dispatch) {
  const r = await via(asKey(apiEvent(method, path, null, {}, query), key), {} as never);
  return r;
}
const json = (r: { body: string }) => JSON.parse(r.body) as Record<string, unknown>;

describe('the analysis routes', () => {
  it('analyses now (200, the analysis JSON), lists the snapshots newest first, and serves the lift PNG', async () => {
    const posted = await call('POST', '/v1/experiments/exp-h/analyze');
    expect(posted.statusCode).toBe(200);
    const analysis = ExperimentAnalysisSchema.parse(json(posted));
    expect(analysis.unitsPerArm.control! + analysis.unitsPerArm.treatment!).toBe(400);
    expect(analysis.metrics.map((m) => m.metric).slice(0, 2)).toEqual(['spend', 'accept_rate']);

    const listed = await call('GET', '/v1/experiments/exp-h/analyses', { limit: '5' });
    expect(listed.statusCode).toBe(200);
    expect((json(listed).items as Array<{ analysisId: string }>).map((a) => a.analysisId)).toEqual([analysis.analysisId]);

    const png = await call('GET', '/v1/experiments/exp-h/lift/spend');
    expect(png.statusCode).toBe(200);
    expect(png.headers).toMatchObject({ 'content-type': 'image/png' });
    expect(png.isBase64Encoded).toBe(true);
    expect([...Buffer.from(png.body, 'base64').subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

    // store=false answers without storing; `to` bounds the window.
    const dry = await call('POST', '/v1/experiments/exp-h/analyze', { store: 'false', to: '2026-11-21T00:00:00Z' });
    expect(dry.statusCode).toBe(200);
    expect(json(dry).to).toBe('2026-11-21T00:00:00.000Z');
    expect((json(await call('GET', '/v1/experiments/exp-h/analyses')).items as unknown[]).length).toBe(1);
  });

  it("answers each tenant's key from its own archive and records", async () => {
    const acme = await call('POST', '/v1/experiments/exp-h/analyze', undefined, { tenant: 'acme', scopes: 'admin' });
    expect(acme.statusCode).toBe(200);
    const units = json(acme).unitsPerArm as Record<string, number>;
    expect(units.control! + units.treatment!).toBe(250);
    expect((await call('GET', '/v1/experiments/exp-h/lift/spend', undefined, { tenant: 'acme', scopes: 'read' })).statusCode).toBe(200);
    // A tenant without the experiment: 404, not another tenant's.
    expect((await call('POST', '/v1/experiments/exp-h/analyze', undefined, { tenant: 'globex', scopes: 'admin' })).statusCode).toBe(404);
    expect((await call('GET', '/v1/experiments/exp-h/analyses', undefined, { tenant: 'globex', scopes: 'read' })).statusCode).toBe(404);
  });

  it('validates every query and path field with its path; 404 for unknown experiments and charts; 403 without admin', async () => {
    const bad = await call('GET', '/v1/experiments/exp-h/analyses', { limit: '0', extra: 'x' });
    expect(bad.statusCode).toBe(400);
    const paths = (json(bad).issues as Array<{ path: string }>).map((i) => i.path).sort();
    expect(paths.some((p) => p.includes('limit'))).toBe(true);
    const badAnalyze = await call('POST', '/v1/experiments/exp-h/analyze', { store: 'maybe', to: 'yesterday' });
    expect(badAnalyze.statusCode).toBe(400);
    const analyzeIssues = (json(badAnalyze).issues as Array<{ path: string }>).map((i) => i.path).join(' ');
    expect(analyzeIssues).toMatch(/store/);
    expect(analyzeIssues).toMatch(/to/);
    const badMetric = await call('GET', '/v1/experiments/exp-h/lift/Not%20A%20Metric');
    expect(badMetric.statusCode).toBe(400);
    expect(JSON.stringify(json(badMetric).issues)).toMatch(/metric/);
    expect((await call('POST', '/v1/experiments/nope/analyze')).statusCode).toBe(404);
    expect((await call('GET', '/v1/experiments/nope/lift/spend')).statusCode).toBe(404);
    const noChart = await call('GET', '/v1/experiments/exp-h/lift/latency_ms_per_turn');
    expect(noChart.statusCode).toBe(404);
    expect(json(noChart).message).toMatch(/No lift chart of latency_ms_per_turn/);
    expect((await call('POST', '/v1/experiments/exp-h/analyze', undefined, { tenant: 'default', scopes: 'read' })).statusCode).toBe(403);
  });

  it('answers 503 where the process has no query engine', async () => {
    const { query: _query, ...withoutQuery } = ports;
    const bare = makeDispatcher(routes, withoutQuery as Ports);
    const r = await call('POST', '/v1/experiments/exp-h/analyze', undefined, ADMIN, bare);
    expect(r.statusCode).toBe(503);
    expect(json(r)).toMatchObject({ error: 'Flywheel.QueryNotConfigured' });
    expect(json(r).message).toMatch(/query engine/);
    // Reading what is stored needs no engine.
    expect((await call('GET', '/v1/experiments/exp-h/analyses', undefined, ADMIN, bare)).statusCode).toBe(200);
  });

  it('documents the three routes in the OpenAPI document', () => {
    const doc = buildOpenApiDocument(routes);
    expect(doc.paths?.['/v1/experiments/{id}/analyze']?.post?.operationId).toBe('analyzeExperiment');
    expect(doc.paths?.['/v1/experiments/{id}/analyses']?.get?.operationId).toBe('listExperimentAnalyses');
    const lift = doc.paths?.['/v1/experiments/{id}/lift/{metric}']?.get;
    expect(lift?.operationId).toBe('getExperimentLiftChart');
    expect(Object.keys((lift?.responses?.['200'] as { content: object }).content)).toEqual(['image/png']);
  });
});
