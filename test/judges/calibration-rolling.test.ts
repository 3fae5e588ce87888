/**
 * The drift watch's statistics: kappa on a rolling window of (judge, person) pairs in time order, checked against
 * kappa recomputed on each window, and the drop detector on a judge that degrades half-way.
 */
import { describe, expect, it } from 'vitest';
import { ErrorNames } from '../../lib/errors.ts';
import { cohenKappa } from '../../lib/judges/calibration/agreement.ts';
import { seededRandom } from '../../lib/judges/calibration/bootstrap.ts';
import { detectDrop, rollingKappa, type LabelPair } from '../../lib/judges/calibration/rolling-agreement.ts';

/** 400 pairs one minute apart; the judge flips gold with probability 0.05, then 0.35 from pair `from` on. */
function pairs(from: number): LabelPair[] {
  const next = seededRandom(99);
  const u = () => next() / 4294967296;
  return Array.from({ length: 400 }, (_, i) => {
    const gold = u() < 0.5 ? 'pass' : 'fail';
    const judge = u() < (i < from ? 0.05 : 0.35) ? (gold === 'pass' ? 'fail' : 'pass') : gold;
    return { at: new Date(Date.UTC(2026, 11, 1) + i * 60_000).toISOString(), judge, gold };
  });
}

describe('rollingKappa', () => {
  it('equals kappa recomputed on each window, whatever the input order', () => {
    const ordered = pairs(200);
    const shuffled = [...ordered].reverse();
    const series = rollingKappa(shuffled, 50);
    expect(series).toHaveLength(400);
    series.forEach((point, i) => {
      const window = ordered.slice(Math.max(0, i - 49), i + 1);
      expect(point.at).toBe(ordered[i]!.at);
      expect(point.n).toBe(window.length);
      const want = cohenKappa(window.map((p) => p.gold), window.map((p) => p.judge));
      if (want === null) expect(point.kappa).toBeNull();
      else expect(point.kappa).toBeCloseTo(want, 10);
    });
  });

  it('is null while the window holds one class only, and refuses a bad window or time', () => {
    const same = [0, 1, 2].map((i) => ({ at: `2026-12-01T00:00:0${i}Z`, judge: 'pass', gold: 'pass' }));
    expect(rollingKappa(same, 2).map((p) => p.kappa)).toEqual([null, null, null]);
    expect(() => rollingKappa(same, 0)).toThrow(expect.objectContaining({ name: ErrorNames.validation, issues: [expect.objectContaining({ path: 'window' })] }));
    expect(() => rollingKappa([{ at: 'yesterday', judge: 'a', gold: 'a' }], 5)).toThrow(/pairs\[0\]\.at/);
  });
});

describe('detectDrop', () => {
  it('finds the drop after the judge degrades, and not before', () => {
    const series = rollingKappa(pairs(250), 100);
    const drop = detectDrop(series, { baseline: 0.9, maxDrop: 0.15, minN: 100 });
    expect(drop.dropped).toBe(true);
    expect(drop.threshold).toBeCloseTo(0.75, 12);
    const index = series.indexOf(drop.point!);
    expect(index).toBeGreaterThan(250);
    expect(drop.point!.kappa!).toBeLessThan(0.75);
    expect(drop.reason).toMatch(/^kappa 0\.\d{3} over 100 pairs at 2026-12-01T0\d:\d\d:00\.000Z is below 0\.750 \(baseline 0\.900 − 0\.150\)$/);

    const steady = detectDrop(rollingKappa(pairs(1000), 100), { baseline: 0.9, maxDrop: 0.15, minN: 100 });
    expect(steady.dropped).toBe(false);
    expect(steady.point!.at).toBe(pairs(1000)[399]!.at);
  });

  it('judges no window below minN', () => {
    const series = rollingKappa(pairs(0), 100);
    const none = detectDrop(series, { baseline: 0.9, maxDrop: 0.1, minN: 500 });
    expect(none).toEqual({ dropped: false, threshold: expect.closeTo(0.8, 12), point: null, reason: 'no window of at least 500 pairs with a defined kappa yet' });
    expect(() => detectDrop(series, { baseline: 0.9, maxDrop: -1, minN: 1 })).toThrow(/maxDrop/);
  });
});
