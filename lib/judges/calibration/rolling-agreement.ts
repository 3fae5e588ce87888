/**
 * Kappa on a rolling window of (judge, person) label pairs, for the drift watch: pairs are ordered by time and each
 * pair closes a window of the last `window` pairs (fewer at the start). The counts are updated incrementally, so a
 * series over m pairs costs O(m·k) for k labels.
 */
import { ValidationError } from '../../errors.ts';

export interface LabelPair {
  /** ISO 8601 time of the person's label. */
  at: string;
  judge: string;
  gold: string;
}

export interface RollingPoint {
  at: string;
  /** Kappa over the window ending at this pair; `null` when undefined (one and the same class everywhere). */
  kappa: number | null;
  /** Pairs in the window. */
  n: number;
}

/**
 * Kappa over a rolling window of `window` pairs, one point per pair in time order (ties keep the input order).
 *
 * @example
 * rollingKappa(pairs, 200); // [{ at: '2026-12-01T10:00:00Z', kappa: null, n: 1 }, …, { at: …, kappa: 0.71, n: 200 }]
 */
export function rollingKappa(pairs: readonly LabelPair[], window: number): RollingPoint[] {
  if (!Number.isInteger(window) || window < 1) {
    throw new ValidationError('window must be a positive integer', [{ path: 'window', message: 'must be a positive integer' }]);
  }
  const timed = pairs.map((p, i) => {
    const t = Date.parse(p.at);
    if (Number.isNaN(t)) throw new ValidationError(`pairs[${i}].at is not a time: ${p.at}`, [{ path: `pairs[${i}].at`, message: 'not an ISO 8601 time' }]);
    if (typeof p.judge !== 'string' || typeof p.gold !== 'string') {
      throw new ValidationError(`pairs[${i}] needs string labels`, [{ path: `pairs[${i}]`, message: 'judge and gold must be strings' }]);
    }
    return { p, t, i };
  });
  timed.sort((x, y) => x.t - y.t || x.i - y.i);

  const rows = new Map<string, number>();
  const cols = new Map<string, number>();
  let diag = 0;
  let n = 0;
  const bump = (m: Map<string, number>, key: string, by: number): void => {
    const v = (m.get(key) ?? 0) + by;
    if (v === 0) m.delete(key);
    else m.set(key, v);
  };
  const apply = (p: LabelPair, by: 1 | -1): void => {
    n += by;
    bump(rows, p.gold, by);
    bump(cols, p.judge, by);
    if (p.gold === p.judge) diag += by;
  };

  const out: RollingPoint[] = [];
  for (let i = 0; i < timed.length; i++) {
    apply(timed[i]!.p, 1);
    if (i >= window) apply(timed[i - window]!.p, -1);
    let chance = 0;
    for (const [label, r] of rows) chance += r * (cols.get(label) ?? 0);
    const expected = n - chance / n;
    out.push({ at: timed[i]!.p.at, kappa: expected > 0 ? 1 - (n - diag) / expected : null, n });
  }
  return out;
}

export interface DropRule {
  /** The kappa the judge was accepted with (its calibration report's estimate). */
  baseline: number;
  /** How far below the baseline a window may fall before it counts as a drop. */
  maxDrop: number;
  /** Windows with fewer pairs are not judged. */
  minN: number;
}

export interface DropResult {
  dropped: boolean;
  /** baseline − maxDrop: a window's kappa below this is a drop. */
  threshold: number;
  /** The first window that dropped, else the latest judged window; `null` when no window was judged. */
  point: RollingPoint | null;
  /** One line for people: what dropped, or why nothing did. */
  reason: string;
}

/**
 * Finds the first window (with at least `minN` pairs and a defined kappa) whose kappa is below `baseline − maxDrop`.
 *
 * @example
 * detectDrop(rollingKappa(pairs, 200), { baseline: 0.78, maxDrop: 0.1, minN: 100 });
 * // { dropped: true, threshold: 0.68, point: { at: '…', kappa: 0.52, n: 200 }, reason: 'kappa 0.520 over 200 pairs … below 0.680 …' }
 */
export function detectDrop(series: readonly RollingPoint[], rule: DropRule): DropResult {
  const issues: { path: string; message: string }[] = [];
  if (!Number.isFinite(rule.baseline)) issues.push({ path: 'baseline', message: 'must be a number' });
  if (!(rule.maxDrop >= 0)) issues.push({ path: 'maxDrop', message: 'must be a non-negative number' });
  if (!Number.isInteger(rule.minN) || rule.minN < 1) issues.push({ path: 'minN', message: 'must be a positive integer' });
  if (issues.length > 0) throw new ValidationError(`invalid drop rule: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
  const threshold = rule.baseline - rule.maxDrop;
  let latest: RollingPoint | null = null;
  for (const point of series) {
    if (point.n < rule.minN || point.kappa === null) continue;
    if (point.kappa < threshold) {
      return {
        dropped: true,
        threshold,
        point,
        reason: `kappa ${point.kappa.toFixed(3)} over ${point.n} pairs at ${point.at} is below ${threshold.toFixed(3)} (baseline ${rule.baseline.toFixed(3)} − ${rule.maxDrop.toFixed(3)})`,
      };
    }
    latest = point;
  }
  return {
    dropped: false,
    threshold,
    point: latest,
    reason:
      latest === null
        ? `no window of at least ${rule.minN} pairs with a defined kappa yet`
        : `kappa ${latest.kappa!.toFixed(3)} over ${latest.n} pairs at ${latest.at} is at or above ${threshold.toFixed(3)}`,
  };
}
