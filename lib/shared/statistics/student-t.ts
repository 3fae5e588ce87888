/**
 * Student's t distribution: the cdf through the incomplete beta (P(T < −|t|) = ½·I_{ν/(ν+t²)}(ν/2, ½)) and the
 * quantile by a safeguarded Newton iteration on it. Fixed-horizon intervals use it where the sample is small (a
 * sweep's tasks) or where GrowthBook does (Welch's test between arms, Welch–Satterthwaite degrees of freedom); beyond
 * 1e7 degrees of freedom it is the normal.
 */
import { logBeta, regularizedBeta } from './incomplete-beta.ts';
import { normalCdf, normalQuantile } from './normal.ts';

const NORMAL_BEYOND_DF = 1e7;

/**
 * P(T_df ≤ t).
 *
 * @example
 * studentTCdf(2.0930240544083096, 19); // 0.975
 */
export function studentTCdf(t: number, df: number): number {
  if (Number.isNaN(t) || !(df > 0)) return Number.NaN;
  if (df >= NORMAL_BEYOND_DF) return normalCdf(t);
  if (t === Number.POSITIVE_INFINITY) return 1;
  if (t === Number.NEGATIVE_INFINITY) return 0;
  const tail = 0.5 * regularizedBeta(df / (df + t * t), df / 2, 0.5, (t * t) / (df + t * t));
  return t < 0 ? tail : 1 - tail;
}

function density(t: number, df: number): number {
  // Γ((ν+1)/2) / Γ(ν/2) / √(νπ) = 1 / (√ν · B(ν/2, ½)).
  return Math.exp(-logBeta(df / 2, 0.5) - 0.5 * Math.log(df) - ((df + 1) / 2) * Math.log1p((t * t) / df));
}

/**
 * The t quantile: t with P(T_df ≤ t) = p.
 *
 * @example
 * studentTQuantile(0.975, 19); // 2.093
 */
export function studentTQuantile(p: number, df: number): number {
  if (Number.isNaN(p) || p < 0 || p > 1 || !(df > 0)) return Number.NaN;
  if (df >= NORMAL_BEYOND_DF) return normalQuantile(p);
  if (p === 0) return Number.NEGATIVE_INFINITY;
  if (p === 1) return Number.POSITIVE_INFINITY;
  if (p === 0.5) return 0;
  // Solve in the lower tail (the cdf keeps its relative precision there), by symmetry for the upper half.
  if (p > 0.5) return -studentTQuantile(1 - p, df);
  let high = 0;
  let low = Math.min(-1, normalQuantile(p));
  while (studentTCdf(low, df) > p) low *= 2;
  let x = Math.max(low, Math.min(high, normalQuantile(p)));
  for (let i = 0; i < 200; i++) {
    const f = studentTCdf(x, df) - p;
    if (f === 0) return x;
    if (f > 0) high = x;
    else low = x;
    const step = x - f / density(x, df);
    // Newton while it stays inside the bracket; halve the bracket otherwise.
    const next = step > low && step < high ? step : (low + high) / 2;
    if (Math.abs(next - x) <= 1e-15 * Math.max(1, Math.abs(x))) return next;
    x = next;
  }
  return x;
}
