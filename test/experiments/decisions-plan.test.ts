/**
 * The planner's rule (`planExperimentAction`), case by case: a guardrail breach stops the arm (decrease-is-good and
 * increase-is-good metrics, with the tolerated regression), not below the minimum sample; an SRM stops the arm whose
 * share strayed; every treatment arm stopped stops the experiment; a held ramp step widens only when guardrails hold
 * and its hours have passed; past maxDurationDays stops; nothing for an experiment that is not running.
 */
import { describe, expect, it } from 'vitest';
import { planExperimentAction } from '../../lib/experiments/decisions/plan-experiment-action.ts';
import { analysisOf, comparison, metricAnalysis, runningExperiment } from './decisions-support.ts';

const HOUR = 3600_000;
const started = Date.parse('2026-12-01T00:00:00.000Z');

describe('planExperimentAction', () => {
  it('stops an arm whose guardrail interval lies wholly past the tolerated regression, with the numbers', () => {
    const e = runningExperiment();
    const breached = metricAnalysis('latency_ms_per_turn', 'guardrail', 'decrease', [comparison('treatment', { relativeLift: 0.12, sequentialCi: { low: 0.061, high: 0.18 }, verdict: 'worse' })]);
    const actions = planExperimentAction(e, analysisOf(e, [breached]), new Date(started + 2 * HOUR));
    expect(actions.map((a) => a.kind)).toEqual(['stop-arm', 'stop']);
    const stop = actions[0] as { arm: string; reason: string; detail: string };
    expect(stop).toMatchObject({ arm: 'treatment', reason: 'guardrail' });
    expect(stop.detail).toContain('latency_ms_per_turn');
    expect(stop.detail).toContain('+12.0%');
    expect(stop.detail).toContain('[+6.1%, +18.0%]');
  });

  it('does not stop inside the tolerance, below the minimum sample, or on the good side', () => {
    const e = runningExperiment();
    for (const c of [
      comparison('treatment', { relativeLift: 0.04, sequentialCi: { low: 0.01, high: 0.07 }, verdict: 'worse' }),
      comparison('treatment', { relativeLift: 0.5, sequentialCi: { low: 0.3, high: 0.7 }, verdict: 'too-few-units' }),
      comparison('treatment', { relativeLift: -0.2, sequentialCi: { low: -0.3, high: -0.1 }, verdict: 'better' }),
    ]) {
      const actions = planExperimentAction(e, analysisOf(e, [metricAnalysis('latency_ms_per_turn', 'guardrail', 'decrease', [c])]), new Date(started + 2 * HOUR));
      expect(actions.some((a) => a.kind === 'stop-arm')).toBe(false);
    }
    // An increase-is-good guardrail breaches on the low side.
    const up = runningExperiment({ metrics: { primary: 'accepted', guardrails: [{ metric: 'thumbs_up_rate', maxRegression: 0.02 }] } });
    const down = metricAnalysis('thumbs_up_rate', 'guardrail', 'increase', [comparison('treatment', { relativeLift: -0.1, sequentialCi: { low: -0.15, high: -0.05 }, verdict: 'worse' })]);
    expect(planExperimentAction(up, analysisOf(up, [down]), new Date(started + HOUR))[0]).toMatchObject({ kind: 'stop-arm', arm: 'treatment', reason: 'guardrail' });
  });

  it('on a sample-ratio mismatch stops the treatment arm whose share strayed furthest, never the control', () => {
    const e = runningExperiment({ arms: [{ id: 'control', checkpoint: 'a', control: true }, { id: 'b', checkpoint: 'b' }, { id: 'c', checkpoint: 'c' }] });
    const srm = { observedUnits: { control: 520, b: 510, c: 400 }, chiSquared: 17.2, pValue: 0.0002, mismatch: true };
    const actions = planExperimentAction(e, analysisOf(e, [], srm), new Date(started + HOUR));
    expect(actions).toHaveLength(1);
    expect(actions[0]).toMatchObject({ kind: 'stop-arm', arm: 'c', reason: 'srm' });
    expect((actions[0] as { detail: string }).detail).toMatch(/p = 2\.00e-4 < 0\.001.*c 400 units \(28\.0% vs expected 33\.3%\)/);
  });

  it('widens a ramp step that held its hours with guardrails holding; not before, not on a worse guardrail, not past the last step', () => {
    const e = runningExperiment();
    const fine = analysisOf(e, [metricAnalysis('latency_ms_per_turn', 'guardrail', 'decrease', [comparison('treatment', { relativeLift: 0.01, sequentialCi: { low: -0.05, high: 0.07 } })])]);
    expect(planExperimentAction(e, fine, new Date(started + 23 * HOUR))).toEqual([{ kind: 'none' }]);
    expect(planExperimentAction(e, fine, new Date(started + 24 * HOUR))).toEqual([{ kind: 'widen-ramp', toStep: 1 }]);
    const worse = analysisOf(e, [metricAnalysis('latency_ms_per_turn', 'guardrail', 'decrease', [comparison('treatment', { relativeLift: 0.03, sequentialCi: { low: -0.01, high: 0.07 }, verdict: 'worse' })])]);
    expect(planExperimentAction(e, worse, new Date(started + 48 * HOUR))).toEqual([{ kind: 'none' }]);
    const last = runningExperiment({}, { rampStep: 2, rampStepSince: '2026-12-03T00:00:00.000Z' });
    expect(planExperimentAction(last, fine, new Date(started + 10 * 24 * HOUR))).toEqual([{ kind: 'none' }]);
  });

  it('stops past maxDurationDays asking for a decision; does nothing for a draft, stopped or decided experiment', () => {
    const e = runningExperiment({ maxDurationDays: 7 }, { rampStep: 2 });
    const a = analysisOf(e, []);
    expect(planExperimentAction(e, a, new Date(started + 7 * 24 * HOUR - 1))).toEqual([{ kind: 'none' }]);
    const [stop] = planExperimentAction(e, a, new Date(started + 7 * 24 * HOUR));
    expect(stop).toMatchObject({ kind: 'stop' });
    expect((stop as { reason: string }).reason).toContain('7 days');
    for (const status of ['draft', 'stopped', 'decided'] as const) expect(planExperimentAction({ ...e, status }, a, new Date(started + 30 * 24 * HOUR))).toEqual([{ kind: 'none' }]);
  });

  it('an arm already stopped is not stopped again; the last live arm stopping stops the experiment', () => {
    const e = runningExperiment(
      { arms: [{ id: 'control', checkpoint: 'a', control: true }, { id: 'b', checkpoint: 'b' }, { id: 'c', checkpoint: 'c' }] },
      { stoppedArms: [{ arm: 'b', reason: 'guardrail', at: '2026-12-01T05:00:00.000Z', detail: 'x' }] },
    );
    const both = metricAnalysis('latency_ms_per_turn', 'guardrail', 'decrease', [
      comparison('b', { relativeLift: 0.2, sequentialCi: { low: 0.1, high: 0.3 }, verdict: 'worse' }),
      comparison('c', { relativeLift: 0.2, sequentialCi: { low: 0.1, high: 0.3 }, verdict: 'worse' }),
    ]);
    const actions = planExperimentAction(e, analysisOf(e, [both]), new Date(started + HOUR));
    expect(actions.map((x) => (x.kind === 'stop-arm' ? `stop-arm:${x.arm}` : x.kind))).toEqual(['stop-arm:c', 'stop']);
  });

  it('an experiment whose every treatment arm was stopped before (a tick that died) is stopped', () => {
    const e = runningExperiment({}, { stoppedArms: [{ arm: 'treatment', reason: 'srm', at: '2026-12-01T05:00:00.000Z', detail: 'x' }] });
    const actions = planExperimentAction(e, analysisOf(e, []), new Date(started + HOUR));
    expect(actions).toEqual([{ kind: 'stop', reason: 'every treatment arm is stopped (treatment): the control serves everyone' }]);
  });
});
