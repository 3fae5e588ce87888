/**
 * `analyzeExperiment` end to end on the local ports (SQLite records, files, real DuckDB over the archive): a known
 * effect is found with its size; a null effect is inconclusive; SRM is flagged when an arm loses exposures; CUPED
 * narrows the interval when the covariate predicts; a guardrail breach stops the arm; failure-mode rates per thousand
 * turns; the snapshot, the experiment's pointer and the lift PNG are stored; and the analysis agrees with a direct
 * per-unit computation from the same rows.
 */
import { PNG } from 'pngjs';
import { afterAll, describe, expect, it } from 'vitest';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { analyzeExperiment, listAnalyses } from '../../lib/experiments/analysis/analyze-experiment.ts';
import { LIFT_PANEL, liftChartOptions, liftSeries } from '../../lib/experiments/analysis/render-lift-chart.ts';
import { CHART_PALETTE, formatPercent } from '../../lib/shared/chart/chart-theme.ts';
import { renderChartSvg } from '../../lib/shared/chart/render-chart.ts';
import { pixel, rgb, svgTexts } from '../shared/chart/support/chart-svg.ts';
import { createExperimentRecord, getExperiment, listChanges } from '../../lib/experiments/experiment-store.ts';
import { archiveKeys, experimentKeys } from '../../lib/experiments/record-keys.ts';
import { MalformedRecordError } from '../../lib/shared/record-codec.ts';
import type { ExperimentAnalysis, ExperimentInput } from '../../lib/experiments/schemas.ts';
import { armValue } from '../../lib/shared/statistics/index.ts';
import { ValidationError } from '../../lib/errors.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import {
  computeDirectly,
  declareTestMetrics,
  definitionsOf,
  LATENCY,
  simulateArchive,
  storeRunningExperiment,
  TEST_METRICS,
  writeArchive,
  type SimulationOptions,
} from './analysis-support.ts';

const tempDir = tempDirs('flywheel-analysis-');
const opened: LocalPorts[] = [];
afterAll(async () => {
  for (const p of opened) {
    await p.query.close();
    p.close();
  }
});

const startedAt = new Date('2026-11-20T00:00:00.000Z');
const now = new Date('2026-11-24T00:00:00.000Z');
const arms = [
  { id: 'control', checkpoint: 'ckpt-a', control: true },
  { id: 'treatment', checkpoint: 'ckpt-b' },
];

function experiment(id: string, extra: Partial<ExperimentInput> = {}): ExperimentInput {
  return {
    id,
    name: id,
    arms,
    metrics: { primary: 'spend', secondary: ['accept_rate'], guardrails: [{ metric: 'latency_ms_per_turn', maxRegression: 0.05 }] },
    plannedUnitsPerArm: 2000,
    ...extra,
  };
}

async function setUp(id: string, sim: Omit<SimulationOptions, 'experimentId' | 'startedAt' | 'arms'> & { arms?: SimulationOptions['arms'] }, input: Partial<ExperimentInput> = {}) {
  const ports = openLocalPorts(tempDir(), { now: () => now });
  opened.push(ports);
  await declareTestMetrics(ports);
  const record = await storeRunningExperiment(ports.records, experiment(id, input), startedAt);
  const archive = simulateArchive({ experimentId: id, startedAt, arms: [{ id: 'control', weight: 1 }, { id: 'treatment', weight: 1 }], ...sim });
  await writeArchive(ports.blobs, 'default', archive);
  return { ports, record, archive };
}

const metricOf = (a: ExperimentAnalysis, name: string) => a.metrics.find((m) => m.metric === name)!;
const treatmentOf = (a: ExperimentAnalysis, name: string) => metricOf(a, name).comparisons.find((c) => c.arm === 'treatment')!;

describe('analyzeExperiment on DuckDB over the archive', () => {
  it('finds a known effect with the right size and recommends shipping; the stored snapshot, pointer, history and PNG follow', async () => {
    const { ports, archive } = await setUp('exp-known', { seed: 21, users: 6000, effects: { treatment: { cost: -0.1, latency: 0.02 } } });
    const analysis = await analyzeExperiment(ports, 'exp-known');
    const spend = treatmentOf(analysis, 'spend');
    // True relative effect on spend per unit: −10% (turns do not depend on the arm).
    expect(spend.relativeLift!).toBeGreaterThan(-0.13);
    expect(spend.relativeLift!).toBeLessThan(-0.07);
    expect(spend.ci!.low).toBeLessThan(-0.1);
    expect(spend.ci!.high).toBeGreaterThan(-0.1);
    expect(spend.sequentialCi!.high).toBeLessThan(0);
    expect(spend.verdict).toBe('better');
    expect(spend.cuped.applied).toBe(true);
    // Latency per turn: the ratio by the delta method finds +2% within its interval.
    const latency = treatmentOf(analysis, 'latency_ms_per_turn');
    expect(latency.ci!.low).toBeLessThan(0.02);
    expect(latency.ci!.high).toBeGreaterThan(0.02);
    expect(metricOf(analysis, 'latency_ms_per_turn').guardrailBreached).toBe(false);
    expect(analysis.recommendation).toMatchObject({ action: 'ship', arm: 'treatment' });
    expect(analysis.recommendation.because).toMatch(/always-valid/);
    expect(analysis.srm.mismatch).toBe(false);
    expect(analysis.engine).toBe('duckdb');
    expect(analysis.progress).toBeCloseTo(Math.min(analysis.unitsPerArm.control!, analysis.unitsPerArm.treatment!) / 2000, 10);

    // Cross-check against a direct per-unit computation from the same rows.
    const direct = computeDirectly(archive, { experimentId: 'exp-known', unitType: 'user', from: startedAt, to: now, cupedPreDays: 14, metrics: [...definitionsOf(TEST_METRICS.accepted, TEST_METRICS.spend), LATENCY] });
    expect(analysis.unitsPerArm).toEqual(Object.fromEntries([...direct.arms].map(([arm, a]) => [arm, a.units])));
    for (const m of analysis.metrics.filter((x) => x.role !== 'failure-mode')) {
      for (const a of m.arms) {
        const want = armValue(direct.metrics.get(m.metric)!.get(a.arm)!, m.kind);
        expect(a.value!, `${m.metric} ${a.arm}`).toBeCloseTo(want.value!, 9);
        expect(a.se!, `${m.metric} ${a.arm}`).toBeCloseTo(want.se!, 9);
      }
    }
    // The control's mean spend by hand: Σ per-unit capped sums / units.
    const controlSpend = direct.metrics.get('spend')!.get('control')!;
    expect(metricOf(analysis, 'spend').arms.find((a) => a.arm === 'control')!.value).toBeCloseTo(controlSpend.sumX / controlSpend.units, 9);

    // Stored: the snapshot (listed newest first), the experiment's pointer, one `analysed` change, each metric's PNG.
    const second = await analyzeExperiment({ ...ports, now: () => new Date(now.getTime() + 3600_000) }, 'exp-known');
    const listed = await listAnalyses(ports.records, 'exp-known');
    expect(listed.map((a) => a.analysisId)).toEqual([second.analysisId, analysis.analysisId]);
    expect(listed[1]).toEqual(analysis);
    const record = await getExperiment(ports.records, 'exp-known');
    expect(record).toMatchObject({ lastAnalysisId: second.analysisId, lastAnalysisAt: second.at });
    expect((await listChanges(ports.records, 'exp-known')).filter((c) => c.change === 'analysed')).toHaveLength(2);
    const bytes = await ports.blobs.get(archiveKeys.liftChart('default', 'exp-known', 'spend'));
    expect(bytes).toBeDefined();
    const png = PNG.sync.read(Buffer.from(bytes!));
    expect([png.width, png.height]).toEqual([LIFT_PANEL.width, 2 * LIFT_PANEL.height]);
    const series = liftSeries('spend', listed, true);
    expect(series.map((s) => s.points.length)).toEqual([2]);
    // The latest lift with its interval, written as percentages, and the arm by name, in both panels.
    const [forest, overTime] = liftChartOptions('exp-known', 'spend', listed, true).map((o) => svgTexts(renderChartSvg(o, LIFT_PANEL)));
    const last = series[0]!.points[1]!;
    expect(forest).toEqual(expect.arrayContaining(['exp-known: spend, relative lift', series[0]!.arm, `${formatPercent(last.lift, true)} [${formatPercent(last.low, true)}, ${formatPercent(last.high, true)}]`]));
    expect(overTime).toEqual(expect.arrayContaining(['spend: relative lift over time', series[0]!.arm]));
    // The over-time line in the first arm's colour, and its washed band, are painted in the lower panel.
    const [r, g, b] = rgb(CHART_PALETTE[0]);
    let line = 0;
    let band = 0;
    for (let y = LIFT_PANEL.height; y < png.height; y++) {
      for (let x = 0; x < png.width; x++) {
        const [pr, pg, pb] = pixel(png, x, y);
        if (Math.abs(pr - r) <= 8 && Math.abs(pg - g) <= 8 && Math.abs(pb - b) <= 8) line++;
        if (Math.abs(pr - Math.round(255 + (r - 255) * 0.22)) <= 6 && Math.abs(pg - Math.round(255 + (g - 255) * 0.22)) <= 6 && Math.abs(pb - Math.round(255 + (b - 255) * 0.22)) <= 6) band++;
      }
    }
    expect(line).toBeGreaterThan(100);
    expect(band).toBeGreaterThan(1000);
    for (const m of analysis.metrics) expect(await ports.blobs.get(archiveKeys.liftChart('default', 'exp-known', m.metric)), m.metric).toBeDefined();
  }, 30_000);

  it('calls a null effect inconclusive, and store: false stores nothing', async () => {
    const { ports } = await setUp('exp-null', { seed: 22, users: 3000 });
    const analysis = await analyzeExperiment(ports, 'exp-null', { store: false });
    for (const m of analysis.metrics.filter((x) => x.role !== 'failure-mode')) expect(treatmentOf(analysis, m.metric).verdict, m.metric).toBe('inconclusive');
    expect(treatmentOf(analysis, 'spend').sequentialCi!.low).toBeLessThan(0);
    expect(treatmentOf(analysis, 'spend').sequentialCi!.high).toBeGreaterThan(0);
    expect(analysis.recommendation.action).toBe('continue');
    expect(await listAnalyses(ports.records, 'exp-null')).toEqual([]);
    expect((await getExperiment(ports.records, 'exp-null')).lastAnalysisId).toBeUndefined();
    expect(await ports.blobs.get(archiveKeys.liftChart('default', 'exp-null', 'spend'))).toBeUndefined();
  }, 30_000);

  it('flags a sample-ratio mismatch when one arm loses exposures, and recommends stopping that arm', async () => {
    const { ports } = await setUp('exp-srm', { seed: 23, users: 4000, dropUnits: { treatment: 0.1 } });
    const analysis = await analyzeExperiment(ports, 'exp-srm', { store: false });
    expect(analysis.srm.mismatch).toBe(true);
    expect(analysis.srm.pValue!).toBeLessThan(0.001);
    expect(analysis.srm.expectedShares).toEqual({ control: 0.5, treatment: 0.5 });
    expect(analysis.srm.observedUnits).toEqual(analysis.unitsPerArm);
    expect(analysis.recommendation).toMatchObject({ action: 'stop-arm', arm: 'treatment' });
    expect(analysis.recommendation.because).toMatch(/sample-ratio mismatch/);

  }, 30_000);

  it('excludes units exposed in two arms and counts them', async () => {
    const { ports } = await setUp('exp-cross', { seed: 24, users: 500, crossoverUsers: 9 });
    const analysis = await analyzeExperiment(ports, 'exp-cross', { store: false });
    expect(analysis.excludedUnits).toBe(9);
    expect(analysis.unitsPerArm.control! + analysis.unitsPerArm.treatment!).toBe(500);
  });

  it('narrows the interval with CUPED when the pre-period predicts, and reads no covariate when cupedPreDays is 0', async () => {
    const { ports } = await setUp('exp-cuped', { seed: 25, users: 3000 });
    const withCuped = await analyzeExperiment(ports, 'exp-cuped', { store: false });
    await storeRunningExperiment(ports.records, experiment('exp-nocuped', { cupedPreDays: 0 }), startedAt);
    await writeArchive(ports.blobs, 'default', simulateArchive({ seed: 25, experimentId: 'exp-nocuped', startedAt, users: 3000, arms: [{ id: 'control', weight: 1 }, { id: 'treatment', weight: 1 }] }), 'again');
    const without = await analyzeExperiment(ports, 'exp-nocuped', { store: false });
    // Spend per unit is strongly predicted by the pre-period spend (about half its variance goes); acceptance by
    // "accepted at least once before" only a little (most units accept at least once over several turns).
    for (const [name, least] of [
      ['spend', 0.3],
      ['accept_rate', 0.001],
    ] as const) {
      const a = treatmentOf(withCuped, name);
      const b = treatmentOf(without, name);
      expect(a.cuped.applied, name).toBe(true);
      expect(a.cuped.varianceReduction!, name).toBeGreaterThan(least);
      expect(b.cuped).toEqual({ applied: false, varianceReduction: null, theta: null });
      expect(a.ci!.high - a.ci!.low, name).toBeLessThan(b.ci!.high - b.ci!.low);
    }
  }, 30_000);

  it('flags a guardrail breach (the always-valid interval past maxRegression on the bad side) and recommends stopping the arm', async () => {
    const { ports } = await setUp('exp-guard', { seed: 26, users: 3000, effects: { treatment: { latency: 0.3 } } }, { stoppingRule: { kind: 'fixed-horizon' } });
    const analysis = await analyzeExperiment(ports, 'exp-guard', { store: false });
    const latency = metricOf(analysis, 'latency_ms_per_turn');
    expect(latency.guardrailBreached).toBe(true);
    // Guardrails are watched continuously: their always-valid interval exists under a fixed-horizon rule too.
    expect(latency.comparisons[0]!.sequentialCi!.low).toBeGreaterThan(0.05);
    expect(treatmentOf(analysis, 'spend').sequentialCi).toBeNull();
    expect(analysis.recommendation).toMatchObject({ action: 'stop-arm', arm: 'treatment' });
    expect(analysis.recommendation.because).toMatch(/guardrail latency_ms_per_turn breached/);
  }, 30_000);

  it('reports failure-mode rates per thousand turns per arm, adjusted together by Benjamini–Hochberg', async () => {
    const { ports, archive } = await setUp('exp-modes', { seed: 27, users: 3000, effects: { treatment: { failureRate: 2 } } });
    const analysis = await analyzeExperiment(ports, 'exp-modes', { store: false });
    const modes = analysis.metrics.filter((m) => m.role === 'failure-mode');
    expect(modes.map((m) => m.metric)).toEqual(['failure_mode.gave-up', 'failure_mode.wrong-tool']);
    const wrongTool = modes[1]!;
    expect(wrongTool).toMatchObject({ kind: 'ratio', direction: 'decrease', displayScale: 1000 });
    for (const a of wrongTool.arms) {
      const turns = archive.exposures.filter((x) => x.arm === a.arm).length;
      const counted = archive.metrics.filter((m) => m.metric === 'failure_mode.wrong-tool' && !m.user_id.includes('.cross')).filter((m) => archive.exposures.some((x) => x.unit_id === m.user_id && x.arm === a.arm && x.occurred_at <= m.occurred_at)).length;
      expect(a.value!).toBeCloseTo(counted / turns, 12);
      expect(a.denominatorSum).toBe(turns);
    }
    // 2% of turns in control (20 per thousand), 6% in treatment.
    expect(wrongTool.arms[0]!.value! * 1000).toBeGreaterThan(14);
    expect(wrongTool.arms[0]!.value! * 1000).toBeLessThan(26);
    expect(wrongTool.comparisons[0]!.verdict).toBe('worse');
    for (const m of modes) expect(m.comparisons[0]!.adjustedPValue!).toBeGreaterThanOrEqual(m.comparisons[0]!.pValue!);
    // Holm across primary, secondary and guardrail.
    for (const m of analysis.metrics.filter((x) => x.role !== 'failure-mode')) expect(m.comparisons[0]!.adjustedPValue!).toBeGreaterThanOrEqual(m.comparisons[0]!.pValue!);
  }, 30_000);

  it('refuses a draft (nothing started) naming status, and a window that ends before the start naming to', async () => {
    const ports = openLocalPorts(tempDir(), { now: () => now });
    opened.push(ports);
    await declareTestMetrics(ports);
    const running = await storeRunningExperiment(ports.records, experiment('exp-early'), startedAt);
    const { startedAt: _started, rampStepSince: _since, ...draft } = running;
    await createExperimentRecord(ports.records, { ...draft, status: 'draft', definition: { ...draft.definition, id: 'exp-draft' } }, 'test', now);
    await expect(analyzeExperiment(ports, 'exp-draft')).rejects.toMatchObject({ issues: [{ path: 'status' }] });
    const early = analyzeExperiment(ports, 'exp-early', { to: new Date('2026-11-01T00:00:00.000Z') });
    await expect(early).rejects.toBeInstanceOf(ValidationError);
    await expect(early).rejects.toMatchObject({ issues: [{ path: 'to' }] });
    await expect(analyzeExperiment(ports, 'nope')).rejects.toThrow(/No experiment nope/);
    // A stopped experiment is read up to its stop, whatever the clock says.
    await storeRunningExperiment(ports.records, experiment('exp-stopped'), startedAt, { status: 'stopped', stoppedAt: '2026-11-22T06:00:00.000Z' });
    expect((await analyzeExperiment(ports, 'exp-stopped', { store: false })).to).toBe('2026-11-22T06:00:00.000Z');
  });

  it('reads a malformed stored analysis as an error naming the record and the field', async () => {
    const ports = openLocalPorts(tempDir(), { now: () => now });
    opened.push(ports);
    await ports.records.put({ ...experimentKeys.analysis('exp-m', now.toISOString(), 'a1'), analysisId: 'a1', experimentId: 'exp-m', at: now.toISOString(), progress: 'lots' });
    const read = listAnalyses(ports.records, 'exp-m');
    await expect(read).rejects.toBeInstanceOf(MalformedRecordError);
    await expect(read).rejects.toThrow(/experiment analysis record EXPERIMENT#exp-m/);
  });
});
