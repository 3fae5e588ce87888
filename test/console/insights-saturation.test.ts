/**
 * The suite pages' pace towards saturation (`projectSaturation`): the best-so-far score through the newest sweeps of
 * the current version, its gain per day, and the days left at that pace; nothing promised when the score does not
 * rise, when it already reached the threshold, or with a single sweep.
 */
import { describe, expect, it } from 'vitest';
import { PACE_POINTS, projectSaturation } from '../../lib/console/web/components/insights/saturation.ts';

const day = (d: number) => new Date(Date.UTC(2026, 11, 1) + d * 86_400_000).toISOString();

describe('projectSaturation', () => {
  it('measures the pace of the best-so-far score and the days left to the threshold', () => {
    // +0.1 a day from 0.5: 0.7 on day 2, so 0.9 two days later.
    const p = projectSaturation([0, 1, 2].map((d) => ({ at: day(d), score: 0.5 + 0.1 * d, suiteVersion: 1 })), 0.9, 1);
    expect(p.current).toBeCloseTo(0.7, 10);
    expect(p.slopePerDay).toBeCloseTo(0.1, 10);
    expect(p.daysLeft).toBeCloseTo(2, 10);
  });

  it('counts a weaker checkpoint after a stronger one as no loss, and only the current version', () => {
    const points = [
      { at: day(0), score: 0.6, suiteVersion: 1 },
      { at: day(1), score: 0.4, suiteVersion: 1 },
      { at: day(0), score: 0.99, suiteVersion: 0 },
    ];
    expect(projectSaturation(points, 0.9, 1)).toEqual({ current: 0.6, slopePerDay: 0, daysLeft: undefined });
  });

  it('promises nothing with one sweep, none, or once the threshold is reached', () => {
    expect(projectSaturation([{ at: day(0), score: 0.5, suiteVersion: 1 }], 0.9, 1)).toEqual({ current: 0.5, slopePerDay: undefined, daysLeft: undefined });
    expect(projectSaturation([], 0.9, 1)).toEqual({ current: undefined, slopePerDay: undefined, daysLeft: undefined });
    const reached = projectSaturation([{ at: day(0), score: 0.8, suiteVersion: 1 }, { at: day(1), score: 0.95, suiteVersion: 1 }], 0.9, 1);
    expect(reached.current).toBe(0.95);
    expect(reached.daysLeft).toBeUndefined();
  });

  it('reads the pace from the newest points only', () => {
    // Flat for a long time, then rising by 0.05 a day over the newest PACE_POINTS sweeps.
    const old = Array.from({ length: 20 }, (_, d) => ({ at: day(d), score: 0.2, suiteVersion: 1 }));
    const recent = Array.from({ length: PACE_POINTS }, (_, i) => ({ at: day(20 + i), score: 0.2 + 0.05 * (i + 1), suiteVersion: 1 }));
    expect(projectSaturation([...old, ...recent], 0.9, 1).slopePerDay).toBeCloseTo(0.05, 10);
  });
});
