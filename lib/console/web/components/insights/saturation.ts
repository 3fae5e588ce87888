/**
 * A suite's saturation as a person asks about it: how close its best strict score is to the threshold, and, while it
 * is still useful, how long until it saturates at the pace of the recent sweeps (a least-squares line through the
 * best-so-far score of the newest points of the current version), or that it is not getting closer.
 *
 * @example
 * projectSaturation(detail.bestScores, 0.9, 1, new Date());
 * // { current: 0.62, slopePerDay: 0.011, daysLeft: 25.5 }
 */

const DAY_MS = 24 * 60 * 60 * 1000;

/** The stage default the registry applies when a suite sets no threshold (`sweeps.saturationThreshold`). */
export const DEFAULT_SATURATION_THRESHOLD = 0.9;

/** Points the pace is measured over: the newest this many. */
export const PACE_POINTS = 10;

export interface SaturationProjection {
  /** Best strict score so far on this version; undefined before any sweep. */
  current: number | undefined;
  /** Gain of the best score per day over the newest points; undefined with fewer than two points in time. */
  slopePerDay: number | undefined;
  /** Days until the threshold at that pace; undefined when not approaching (no gain) or already there. */
  daysLeft: number | undefined;
}

export function projectSaturation(
  points: Array<{ at: string; score: number; suiteVersion: number }>,
  threshold: number,
  version: number,
): SaturationProjection {
  const mine = points.filter((p) => p.suiteVersion === version && Number.isFinite(Date.parse(p.at))).sort((a, b) => a.at.localeCompare(b.at));
  if (mine.length === 0) return { current: undefined, slopePerDay: undefined, daysLeft: undefined };
  // The best so far at each point: a weaker checkpoint later does not make the suite less saturated.
  let best = -Infinity;
  const series = mine.map((p) => {
    best = Math.max(best, p.score);
    return { t: Date.parse(p.at) / DAY_MS, y: best };
  });
  const current = best;
  const recent = series.slice(-PACE_POINTS);
  const n = recent.length;
  const meanT = recent.reduce((a, p) => a + p.t, 0) / n;
  const meanY = recent.reduce((a, p) => a + p.y, 0) / n;
  const sxx = recent.reduce((a, p) => a + (p.t - meanT) ** 2, 0);
  if (n < 2 || sxx === 0) return { current, slopePerDay: undefined, daysLeft: undefined };
  const slopePerDay = recent.reduce((a, p) => a + (p.t - meanT) * (p.y - meanY), 0) / sxx;
  const daysLeft = current >= threshold || slopePerDay <= 0 ? undefined : (threshold - current) / slopePerDay;
  return { current, slopePerDay, daysLeft };
}
