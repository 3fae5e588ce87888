/**
 * The Wilson score interval of a proportion: stays inside [0, 1] and behaves at 0/n and n/n, where the normal
 * interval collapses to a point (Wilson 1927; Agresti & Coull 1998).
 */
import { Z95 } from './normal.ts';

export interface Interval {
  low: number;
  high: number;
}

/**
 * Wilson score interval for `successes` out of `n` (z defaults to the 95% critical value). n < 1 says nothing: [0, 1].
 *
 * @example
 * wilsonInterval(8, 10); // { low: 0.4902, high: 0.9433 }
 */
export function wilsonInterval(successes: number, n: number, z = Z95): Interval {
  if (!(n >= 1)) return { low: 0, high: 1 };
  const p = Math.min(1, Math.max(0, successes / n));
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}
