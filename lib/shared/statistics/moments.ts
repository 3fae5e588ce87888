/**
 * The sufficient statistics of one arm on one metric, as one SQL `GROUP BY arm` returns them over per-unit values
 * (the unit, not the turn, is the sample: turns of one user are correlated), and the sample moments derived from them.
 *
 * X is the unit's value (binomial 0/1, mean: the unit's sum, ratio: the numerator's sum), Y a ratio's denominator, C
 * the pre-period covariate of X (CUPED). A sum left out was not collected.
 */

export interface ArmMoments {
  units: number;
  sumX: number;
  sumX2: number;
  sumY?: number;
  sumY2?: number;
  sumXY?: number;
  sumC?: number;
  sumC2?: number;
  sumXC?: number;
}

/**
 * The sample covariance (n − 1 denominator) from sums; the variance when both sides are the same variable. Never
 * negative for a variance: rounding in Σx² − (Σx)²/n can go below 0 for a constant variable.
 *
 * @example
 * sampleCovariance(6, 6, 14, 3); // variance of (1, 2, 3) = 1
 */
export function sampleCovariance(sumA: number, sumB: number, sumAB: number, n: number): number {
  if (n < 2) return 0;
  return (sumAB - (sumA * sumB) / n) / (n - 1);
}

/**
 * The sample variance (n − 1 denominator) from Σx and Σx².
 *
 * @example
 * sampleVariance(6, 14, 3); // 1
 */
export function sampleVariance(sum: number, sumSquares: number, n: number): number {
  return Math.max(0, sampleCovariance(sum, sum, sumSquares, n));
}

/**
 * Whether the arm carries the covariate sums CUPED needs.
 *
 * @example
 * if (hasCovariate(m)) theta = (m.sumXC - (m.sumX * m.sumC) / m.units) / (m.sumC2 - (m.sumC * m.sumC) / m.units);
 */
export function hasCovariate(m: ArmMoments): m is ArmMoments & { sumC: number; sumC2: number; sumXC: number } {
  return m.sumC !== undefined && m.sumC2 !== undefined && m.sumXC !== undefined;
}

/**
 * Whether the arm carries the denominator sums a ratio needs.
 *
 * @example
 * const ratio = hasDenominator(m) ? m.sumX / m.sumY : null;
 */
export function hasDenominator(m: ArmMoments): m is ArmMoments & { sumY: number; sumY2: number; sumXY: number } {
  return m.sumY !== undefined && m.sumY2 !== undefined && m.sumXY !== undefined;
}
