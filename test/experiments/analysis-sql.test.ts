/**
 * The analysis SQL on real DuckDB over archive files written by the archive writer: its per-arm moments equal a
 * per-unit computation in JavaScript from the same rows; units in two arms are excluded and counted; events before a
 * unit's first exposure are not counted (but are its covariate); another tenant's rows are never read; the portable
 * epoch arithmetic agrees with `Date.parse`.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { FsBlobs } from '../../lib/drivers/local/fs-blobs.ts';
import { DuckDbQuery } from '../../lib/drivers/local/duckdb-query.ts';
import { buildAnalysisSql, isoEpochSecondsSql } from '../../lib/experiments/analysis/build-analysis-sql.ts';
import { readAnalysisRows, type AnalysisAggregates } from '../../lib/experiments/analysis/read-analysis-rows.ts';
import type { MetricRow } from '../../lib/experiments/schemas.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import { computeDirectly, definitionsOf, LATENCY, simulateArchive, SPARSE_METRICS, TEST_METRICS, TOOL_ERRORS, writeArchive, type DirectResult } from './analysis-support.ts';

const tempDir = tempDirs('flywheel-analysis-sql-');
const queries: DuckDbQuery[] = [];
afterAll(async () => {
  for (const q of queries) await q.close();
});

const startedAt = new Date('2026-11-20T00:00:00.000Z');
const to = new Date('2026-11-24T00:00:00.000Z');
const metrics = [...definitionsOf(TEST_METRICS.accepted, TEST_METRICS.spend, ...SPARSE_METRICS), LATENCY, TOOL_ERRORS];
const arms = [
  { id: 'control', weight: 1 },
  { id: 'treatment', weight: 1 },
];

function expectSameMoments(got: AnalysisAggregates, want: DirectResult): void {
  expect(Object.fromEntries(got.arms)).toEqual(Object.fromEntries(want.arms));
  expect(got.excludedUnits).toBe(want.excludedUnits);
  for (const [target, expected] of [
    [got.metrics, want.metrics],
    [got.failureModes, want.failureModes],
  ] as const) {
    expect([...target.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [key, byArm] of expected) {
      for (const [arm, m] of byArm) {
        const g = target.get(key)?.get(arm);
        expect(g, `${key} ${arm}`).toBeDefined();
        expect(Object.keys(g!).sort(), `${key} ${arm}`).toEqual(Object.keys(m).sort());
        // Summation order differs between the engines: equal to 1e-12 relative.
        for (const [field, value] of Object.entries(m)) {
          expect(Math.abs(g![field as keyof typeof g]! - (value as number)), `${key} ${arm} ${field}`).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(value as number)));
        }
      }
    }
  }
}

async function openArchive() {
  const root = tempDir();
  const query = new DuckDbQuery(root);
  queries.push(query);
  return { blobs: new FsBlobs(root), query };
}

describe('the analysis SQL over the raw archive (DuckDB)', () => {
  it('returns per-arm moments equal to a per-unit computation in JavaScript from the same rows, a few rows per arm', async () => {
    const { blobs, query } = await openArchive();
    const archive = simulateArchive({ seed: 11, experimentId: 'exp-x', startedAt, users: 1500, arms, crossoverUsers: 7, effects: { treatment: { accepted: 0.3, failureRate: 1 } } });
    await writeArchive(blobs, 'default', archive);
    const input = { experimentId: 'exp-x', unitType: 'user' as const, from: startedAt, to, cupedPreDays: 7, metrics };
    const result = await query.run(buildAnalysisSql({ ...input, tenant: 'default', from: startedAt.toISOString(), to: to.toISOString() }));
    const got = readAnalysisRows(result.rows, input);
    const want = computeDirectly(archive, input);
    expectSameMoments(got, want);
    expect(got.excludedUnits).toBe(7);
    expect(got.failureModes.size).toBe(2);
    // arms (2) + excluded (1) + (7 metrics + 2 failure modes) × 2 arms: nothing per unit leaves the engine.
    expect(result.rows).toHaveLength(2 + 1 + 9 * 2);
    // The sparse source: most units have no tool errors, yet every unit of the arm counts.
    const sparse = got.metrics.get('any_tool_error')!.get('control')!;
    expect(sparse.units).toBe(got.arms.get('control')!.units);
    expect(sparse.sumX / sparse.units).toBeLessThan(0.5);
    // The crossovers' 500-dollar costs are nowhere in the sums.
    const spend = got.metrics.get('spend')!;
    expect(Math.max(...[...spend.values()].map((m) => m.sumX / m.units))).toBeLessThan(10);
  });

  it('reads workspaces as units when the experiment randomises workspaces', async () => {
    const { blobs, query } = await openArchive();
    const archive = simulateArchive({ seed: 12, experimentId: 'exp-ws', startedAt, users: 400, arms, unitType: 'workspace' });
    await writeArchive(blobs, 'default', archive);
    const input = { experimentId: 'exp-ws', unitType: 'workspace' as const, from: startedAt, to, cupedPreDays: 14, metrics };
    const got = readAnalysisRows((await query.run(buildAnalysisSql({ ...input, tenant: 'default', from: startedAt.toISOString(), to: to.toISOString() }))).rows, input);
    expectSameMoments(got, computeDirectly(archive, input));
    expect([...got.arms.values()].reduce((s, a) => s + a.units, 0)).toBe(400);
  });

  it('ignores events before the first exposure (they are the covariate) and outside the window and pre-period', async () => {
    const { blobs, query } = await openArchive();
    const row = (id: string, metric: string, value: number, at: string): MetricRow => ({
      id, metric, value, scope: 'turn', user_id: 'solo', workspace_id: null, model: 'm', experiment: null, arm: null, session_id: null, turn_id: null, occurred_at: at, received_at: at,
    });
    const archive = {
      exposures: [
        { id: 'x1', experiment: 'exp-p', arm: 'treatment', checkpoint: 'c', unit_type: 'user' as const, unit_id: 'solo', session_id: null, turn_id: null, occurred_at: '2026-11-21T12:00:00.000Z', received_at: '2026-11-21T12:00:00.000Z' },
        // After the window: not an exposure of this analysis.
        { id: 'x2', experiment: 'exp-p', arm: 'treatment', checkpoint: 'c', unit_type: 'user' as const, unit_id: 'solo', session_id: null, turn_id: null, occurred_at: '2026-11-25T12:00:00.000Z', received_at: '2026-11-25T12:00:00.000Z' },
      ],
      metrics: [
        row('a-before', 'accepted', 1, '2026-11-21T11:59:59.000Z'),
        row('s-before', 'cost_usd', 4, '2026-11-20T12:00:00.000Z'),
        // Before the 7-day pre-period (7 days and 1 second before the first exposure): not the covariate either.
        row('s-old', 'cost_usd', 100, '2026-11-14T11:59:59.000Z'),
        row('s-edge', 'cost_usd', 2, '2026-11-14T12:00:00.000Z'),
        row('s-after', 'cost_usd', 3, '2026-11-21T12:00:00.000Z'),
        // After `to`: not counted.
        row('s-late', 'cost_usd', 50, '2026-11-24T00:00:01.000Z'),
        row('a-late', 'accepted', 1, '2026-11-24T00:00:01.000Z'),
      ],
    };
    await writeArchive(blobs, 'default', archive);
    const input = { tenant: 'default', experimentId: 'exp-p', unitType: 'user' as const, from: startedAt.toISOString(), to: to.toISOString(), cupedPreDays: 7, metrics };
    const got = readAnalysisRows((await query.run(buildAnalysisSql(input))).rows, input);
    expect(got.arms.get('treatment')).toEqual({ units: 1, exposures: 1 });
    expect(got.metrics.get('accept_rate')!.get('treatment')).toMatchObject({ units: 1, sumX: 0, sumC: 1 });
    expect(got.metrics.get('spend')!.get('treatment')).toMatchObject({ units: 1, sumX: 3, sumC: 6 });
  });

  it("never reads another tenant's rows, though they name the same experiment", async () => {
    const { blobs, query } = await openArchive();
    const mine = simulateArchive({ seed: 13, experimentId: 'exp-t', startedAt, users: 300, arms });
    const theirs = simulateArchive({ seed: 14, experimentId: 'exp-t', tenant: 'other', startedAt, users: 500, arms, effects: { treatment: { accepted: 2, cost: 5 } } });
    await writeArchive(blobs, 'default', mine);
    await writeArchive(blobs, 'other', theirs);
    const input = { experimentId: 'exp-t', unitType: 'user' as const, from: startedAt, to, cupedPreDays: 7, metrics };
    const sqlFor = (tenant: string) => buildAnalysisSql({ ...input, tenant, from: startedAt.toISOString(), to: to.toISOString() });
    const defaultView = query.forTenant('default');
    expectSameMoments(readAnalysisRows((await defaultView.run(sqlFor(defaultView.tenant))).rows, input), computeDirectly(mine, input));
    const otherView = query.forTenant('other');
    expectSameMoments(readAnalysisRows((await otherView.run(sqlFor(otherView.tenant))).rows, input), computeDirectly(theirs, input));
    expect(sqlFor("o'brien")).toContain("tenant = 'o''brien'");
  });

  it('computes seconds since 1970 of ISO strings with integer arithmetic both engines share', async () => {
    const { query } = await openArchive();
    const times = ['1970-01-01T00:00:00.000Z', '2000-02-29T23:59:59.000Z', '2024-03-01T00:00:00Z', '2026-12-31T23:59:59.999Z', '2100-03-01T12:34:56.000Z', '2026-01-01T00:00:00.000Z'];
    const sql = `SELECT t, ${isoEpochSecondsSql('t')} AS s FROM (VALUES ${times.map((t) => `('${t}')`).join(', ')}) AS v(t)`;
    const { rows } = await query.run(sql);
    for (const r of rows) expect(r.s, String(r.t)).toBe(Math.floor(Date.parse(String(r.t)) / 1000));
  });

  it('refuses windows that are not ISO-8601 UTC strings and metrics without their parts', () => {
    const base = { tenant: 'default', experimentId: 'e', unitType: 'user' as const, from: startedAt.toISOString(), to: to.toISOString(), cupedPreDays: 7, metrics };
    expect(() => buildAnalysisSql({ ...base, from: '2026-11-20T00:00:00+02:00' })).toThrow(/ISO-8601 UTC/);
    expect(() => buildAnalysisSql({ ...base, to: "2026-11-20'; DROP TABLE x; --" })).toThrow(/ISO-8601 UTC/);
    expect(() => buildAnalysisSql({ ...base, metrics: [] })).toThrow(/at least one metric/);
    expect(() => buildAnalysisSql({ ...base, metrics: [{ name: 'r', kind: 'ratio' }] })).toThrow(/numerator/);
  });
});
