import { afterEach, describe, expect, it } from 'vitest';
import { retireCheckpointForTest } from './support/registry-edits.ts';
import { listResults } from '../../lib/registry/list-results.ts';
import { getSweepReport } from '../../lib/sweeps/get-sweep-report.ts';
import { differenceOf, scoreTallies, wilsonInterval } from '../../lib/sweeps/score-interval.ts';
import { sweepStepHandlers } from '../../lib/sweeps/sweep-step-handlers.ts';
import { driveSweep } from './support/drive-sweep.ts';
import { rateScript } from './support/scripted-rollout.ts';
import { openSweepFixture, type SweepFixture } from './support/sweep-fixture.ts';

let fx: SweepFixture;
afterEach(() => fx?.close());

describe('scores and intervals', () => {
  it('Wilson interval matches the textbook values', () => {
    const w = wilsonInterval(8, 10);
    expect(w.low).toBeCloseTo(0.4902, 4);
    expect(w.high).toBeCloseTo(0.9433, 4);
    const zero = wilsonInterval(0, 20);
    expect(zero.low).toBe(0);
    expect(zero.high).toBeCloseTo(0.1611, 4);
  });

  it('with several attempts per task, the task is the unit of the interval', () => {
    const tallies = [
      { taskId: 'a', scored: 4, passed: 4 },
      { taskId: 'b', scored: 4, passed: 0 },
      { taskId: 'c', scored: 4, passed: 2 },
    ];
    const s = scoreTallies(tallies);
    expect(s.score).toBeCloseTo(0.5, 12);
    // sd of (1, 0, 0.5) = 0.5; se = 0.5 / √3
    expect(s.se).toBeCloseTo(0.5 / Math.sqrt(3), 12);
    // Student's t with 2 degrees of freedom (4.303): 0.5 ± 1.242, clamped to [0, 1].
    expect(s.ci).toEqual({ low: 0, high: 1 });
    // All tasks equal: the pooled Wilson interval stands in for a zero-width one.
    const flat = scoreTallies([{ taskId: 'a', scored: 3, passed: 3 }, { taskId: 'b', scored: 3, passed: 3 }]);
    expect(flat.ci).toEqual(wilsonInterval(6, 6));
  });

  it('paired differences over common tasks', () => {
    const cand = [1, 1, 1, 0].map((p, i) => ({ taskId: `t${i}`, scored: 1, passed: p }));
    const inc = [0, 0, 1, 0].map((p, i) => ({ taskId: `t${i}`, scored: 1, passed: p }));
    const d = differenceOf(cand, inc)!;
    expect(d).toMatchObject({ difference: 0.5, paired: true, n: 4 });
    // d = (1,1,0,0): sd = 0.57735, se = 0.288675, t(0.975, 3) = 3.182446; 0.5 + 0.919 is past 1, and a difference
    // of rates is at most 1.
    expect(d.ci.low).toBeCloseTo(0.5 - 3.182446305284263 * 0.288675, 5);
    expect(d.ci.high).toBe(1);
  });
});

describe('compare-incumbent', () => {
  it('compares each checkpoint with the best active checkpoint of earlier sweeps: better, worse, no difference', async () => {
    fx = openSweepFixture();
    await fx.seed({ checkpoints: 3, suites: 1, tasks: 50 });
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    // Sweep 1: ck-0 alone sets the bar at 0.5.
    await driveSweep(steps, fx.ports, { sweepId: 's1', trigger: 'manual', requestedAt: '2026-12-02T11:00:00.000Z', checkpoints: ['ck-0'], modes: ['strict'] }, { script: rateScript(() => 0.5) });
    const first = await getSweepReport(fx.ports, 's1');
    expect(first.comparisons).toEqual([expect.objectContaining({ checkpoint: 'ck-0', verdict: 'incumbent', incumbent: 'ck-0' })]);
    // Sweep 2: ck-1 much better, ck-2 much worse, ck-0 the same.
    const rates: Record<string, number> = { 'ck-0': 0.5, 'ck-1': 0.9, 'ck-2': 0.1 };
    const c = await driveSweep(
      steps,
      fx.ports,
      { sweepId: 's2', trigger: 'manual', requestedAt: '2026-12-02T12:00:00.000Z', checkpoints: ['ck-0', 'ck-1', 'ck-2'], modes: ['strict'] },
      { script: rateScript((ck) => rates[ck]!) },
    );
    expect(c.notice.status).toBe('succeeded');
    const report = await getSweepReport(fx.ports, 's2');
    const by = Object.fromEntries(report.comparisons.map((x) => [x.checkpoint, x]));
    expect(by['ck-0']).toMatchObject({ verdict: 'incumbent', incumbent: 'ck-0' });
    expect(by['ck-1']).toMatchObject({ verdict: 'better', incumbent: 'ck-0', paired: true, n: 50, incumbentSource: 'best-active' });
    expect(by['ck-1']!.rule).toBe('better: the 95% interval of the difference (paired over 50 common tasks, ≥ 20 needed) lies wholly above 0; vs the best active checkpoint of earlier sweeps on this suite version');
    expect(by['ck-1']!.difference).toBeCloseTo(0.4, 12);
    expect(by['ck-2']).toMatchObject({ verdict: 'worse', incumbent: 'ck-0' });
    expect(by['ck-2']!.ci!.high).toBeLessThan(0);
    // The time series: a checkpoint over its sweeps, every checkpoint on a suite, oldest first.
    const series = await listResults(fx.ports, { checkpoint: 'ck-0' });
    expect(series.items.map((r) => [r.sweepId, r.score])).toEqual([['s1', 0.5], ['s2', 0.5]]);
    const onSuite = await listResults(fx.ports, { suite: 'suite-0', mode: 'strict' });
    expect(onSuite.items.map((r) => `${r.sweepId}:${r.checkpoint}`)).toEqual(['s1:ck-0', 's2:ck-0', 's2:ck-1', 's2:ck-2']);

    // Sweep 3 (ck-1's 0.9 saturated the suite: it is swept only when named): the incumbent is now ck-1, the best of
    // earlier sweeps; once ck-1 is retired it is ck-0 again.
    await driveSweep(steps, fx.ports, { sweepId: 's3', trigger: 'manual', requestedAt: '2026-12-02T13:00:00.000Z', checkpoints: ['ck-2'], suites: ['suite-0'], modes: ['strict'] }, { script: rateScript(() => 0.5) });
    expect((await getSweepReport(fx.ports, 's3')).comparisons[0]).toMatchObject({ checkpoint: 'ck-2', incumbent: 'ck-1', verdict: 'worse' });
    await retireCheckpointForTest(fx.ports.records, 'ck-1');
    await steps['compare-incumbent'](fx.ports, { sweepId: 's3' });
    expect((await getSweepReport(fx.ports, 's3')).comparisons[0]).toMatchObject({ checkpoint: 'ck-2', incumbent: 'ck-0', verdict: 'no-difference' });
  });
});
