/**
 * The recommendation rules, one by one, on hand-built comparisons (the statistics that produce them are tested
 * against DuckDB in analysis.test.ts and against references by the statistics module): SRM and guardrails first,
 * rollback, ship under each stopping rule, widen the ramp only after its hours with guardrails holding, extend at the
 * planned sample or the maximum duration, else continue; stopped arms are not acted on again.
 */
import { describe, expect, it } from 'vitest';
import { recommendExperimentAction, type RecommendationInput } from '../../lib/experiments/analysis/recommend-experiment-action.ts';
import { ExperimentInput, type ExperimentRecord, type MetricAnalysis } from '../../lib/experiments/schemas.ts';

const startedAt = '2026-11-20T00:00:00.000Z';
const HOUR = 3600_000;

function record(extra: Partial<ExperimentInput> = {}, state: Partial<ExperimentRecord> = {}): ExperimentRecord {
  const definition = ExperimentInput.parse({
    id: 'exp-r',
    name: 'r',
    arms: [
      { id: 'control', checkpoint: 'a', control: true },
      { id: 'b', checkpoint: 'b' },
      { id: 'c', checkpoint: 'c' },
    ],
    metrics: { primary: 'spend', guardrails: [{ metric: 'latency_ms_per_turn', maxRegression: 0.05 }] },
    plannedUnitsPerArm: 1000,
    ...extra,
  });
  return { definition, status: 'running', plannedUnitsPerArm: 1000, rampStep: 0, rampStepSince: startedAt, stoppedArms: [], origin: { kind: 'person', by: 't' }, createdAt: startedAt, startedAt, revision: 1, ...state };
}

type Verdict = MetricAnalysis['comparisons'][number]['verdict'];
function comparison(arm: string, verdict: Verdict, lift: number, seq: [number, number], fixed: [number, number] = seq): MetricAnalysis['comparisons'][number] {
  return {
    arm,
    control: 'control',
    difference: lift,
    relativeLift: lift,
    ci: { low: fixed[0], high: fixed[1] },
    sequentialCi: { low: seq[0], high: seq[1] },
    pValue: 0.5,
    adjustedPValue: 0.5,
    chanceToWin: 0.5,
    cuped: { applied: false, varianceReduction: null, theta: null },
    verdict,
    rule: `${verdict}: by the test's rule`,
  };
}
function metric(name: string, role: MetricAnalysis['role'], direction: 'increase' | 'decrease', comparisons: MetricAnalysis['comparisons'], guardrailBreached?: boolean): MetricAnalysis {
  return { metric: name, role, kind: 'mean', direction, displayScale: 1, arms: [], comparisons, ...(guardrailBreached !== undefined ? { guardrailBreached } : {}) };
}
const quietGuardrail = metric('latency_ms_per_turn', 'guardrail', 'decrease', [comparison('b', 'inconclusive', 0, [-0.02, 0.02]), comparison('c', 'inconclusive', 0, [-0.02, 0.02])], false);
const noSrm = { expectedShares: { control: 1 / 3, b: 1 / 3, c: 1 / 3 }, observedUnits: { control: 500, b: 500, c: 500 }, chiSquared: 0, pValue: 1, mismatch: false };

function input(over: Partial<RecommendationInput> & { primary?: MetricAnalysis['comparisons'] }): RecommendationInput {
  const primary = metric('spend', 'primary', 'decrease', over.primary ?? [comparison('b', 'inconclusive', 0, [-0.1, 0.1]), comparison('c', 'inconclusive', 0, [-0.1, 0.1])]);
  return { experiment: record(), metrics: [primary, quietGuardrail], srm: noSrm, unitsPerArm: { control: 500, b: 500, c: 500 }, now: new Date(Date.parse(startedAt) + 48 * HOUR), ...over };
}

describe('recommendExperimentAction', () => {
  it('stops the arm furthest from its share on SRM, before anything else', () => {
    const srm = { ...noSrm, observedUnits: { control: 520, b: 515, c: 400 }, chiSquared: 19, pValue: 7e-5, mismatch: true };
    const r = recommendExperimentAction(input({ srm, primary: [comparison('b', 'better', -0.2, [-0.3, -0.1]), comparison('c', 'inconclusive', 0, [-0.1, 0.1])] }));
    expect(r).toMatchObject({ action: 'stop-arm', arm: 'c' });
    expect(r.because).toMatch(/sample-ratio mismatch.*p < 0.001/);
  });

  it('stops an arm whose guardrail is breached, but not an arm already stopped', () => {
    const breached = metric('latency_ms_per_turn', 'guardrail', 'decrease', [comparison('b', 'worse', 0.2, [0.1, 0.3]), comparison('c', 'inconclusive', 0, [-0.02, 0.02])], true);
    expect(recommendExperimentAction(input({ metrics: [input({}).metrics[0]!, breached] }))).toMatchObject({ action: 'stop-arm', arm: 'b' });
    const stopped = record({}, { stoppedArms: [{ arm: 'b', reason: 'guardrail', at: startedAt, detail: 'x' }] });
    expect(recommendExperimentAction(input({ experiment: stopped, metrics: [input({}).metrics[0]!, breached] })).action).toBe('continue');
    // Within maxRegression (+4% with 5% tolerated): not breached.
    const tolerated = metric('latency_ms_per_turn', 'guardrail', 'decrease', [comparison('b', 'worse', 0.04, [0.01, 0.045])], false);
    expect(recommendExperimentAction(input({ metrics: [input({}).metrics[0]!, tolerated] })).action).not.toBe('stop-arm');
  });

  it('rolls back when the primary is worse, and ships the arm with the best lift when better', () => {
    expect(recommendExperimentAction(input({ primary: [comparison('b', 'worse', 0.2, [0.1, 0.3]), comparison('c', 'better', -0.2, [-0.3, -0.1])] }))).toMatchObject({ action: 'rollback', arm: 'b' });
    const ship = recommendExperimentAction(input({ primary: [comparison('b', 'better', -0.1, [-0.15, -0.05]), comparison('c', 'better', -0.2, [-0.3, -0.1])] }));
    expect(ship).toMatchObject({ action: 'ship', arm: 'c' });
    expect(ship.because).toMatch(/-20.0% \[-30.0%, -10.0%\] \(always-valid\)/);
    expect(ship.because).toMatch(/Rule: sequential/);
  });

  it('under a fixed horizon, acts only once the planned sample is reached', () => {
    const experiment = record({ stoppingRule: { kind: 'fixed-horizon' } });
    const primary = [comparison('b', 'better', -0.1, [-0.2, 0.01], [-0.15, -0.05]), comparison('c', 'inconclusive', 0, [-0.1, 0.1])];
    const early = recommendExperimentAction(input({ experiment, primary }));
    expect(early.action).toBe('continue');
    expect(early.because).toMatch(/fixed-horizon: act only once both arms reach the planned 1000 units/);
    const reached = recommendExperimentAction(input({ experiment, primary, unitsPerArm: { control: 1000, b: 1000, c: 1000 } }));
    expect(reached).toMatchObject({ action: 'ship', arm: 'b' });
    expect(reached.because).toMatch(/\[-15.0%, -5.0%\]/);
  });

  it('widens the ramp once the step has held its hours with every guardrail holding', () => {
    const ramped = record({ ramp: [{ percent: 10, minHours: 24 }, { percent: 50, minHours: 24 }, { percent: 100, minHours: 0 }] });
    expect(recommendExperimentAction(input({ experiment: ramped, now: new Date(Date.parse(startedAt) + 23 * HOUR) })).action).toBe('continue');
    const widen = recommendExperimentAction(input({ experiment: ramped, now: new Date(Date.parse(startedAt) + 25 * HOUR) }));
    expect(widen.action).toBe('widen-ramp');
    expect(widen.because).toMatch(/widen to 50%/);
    const worse = metric('latency_ms_per_turn', 'guardrail', 'decrease', [comparison('b', 'worse', 0.02, [0.01, 0.03])], false);
    expect(recommendExperimentAction(input({ experiment: ramped, metrics: [input({}).metrics[0]!, worse], now: new Date(Date.parse(startedAt) + 25 * HOUR) })).action).toBe('continue');
    const last = record({ ramp: [{ percent: 10, minHours: 1 }, { percent: 100, minHours: 0 }] }, { rampStep: 1 });
    expect(recommendExperimentAction(input({ experiment: last })).action).toBe('continue');
  });

  it('recommends extending when the planned sample is reached or the maximum duration is over, inconclusive', () => {
    expect(recommendExperimentAction(input({ unitsPerArm: { control: 1000, b: 1200, c: 1001 } })).action).toBe('extend');
    const over = recommendExperimentAction(input({ now: new Date(Date.parse(startedAt) + 29 * 24 * HOUR) }));
    expect(over.action).toBe('extend');
    expect(over.because).toMatch(/maximum of 28 days is over/);
  });
});
