/**
 * Always-valid intervals: the asymptotic confidence sequence of Waudby-Smith, Arnold, Wu and Ramdas (2021, "Time-
 * uniform central limit theory and asymptotic confidence sequences", arXiv 2103.06476), in the form GrowthBook
 * documents and ships (gbstats `sequential_interval_halfwidth`, `sequential_rho`). Its coverage holds at every n at
 * once, so an experiment may be watched continuously and stopped whenever the interval excludes 0 without raising
 * the false-positive rate above alpha. ρ tunes it to be narrowest near `tuningN` (the planned sample).
 */

/**
 * The mixing parameter ρ that makes the sequence narrowest at n = tuningN (two-sided).
 *
 * @example
 * sequentialRho(0.05, 10_000); // ≈ 0.0282
 */
export function sequentialRho(alpha: number, tuningN: number): number {
  const l = -2 * Math.log(alpha);
  return Math.sqrt((l + Math.log(l + 1)) / tuningN);
}

/**
 * Half-width of the two-sided 1 − alpha asymptotic confidence sequence for a mean after n observations of standard
 * deviation `sd`: sd·√(2(nρ² + 1)/(n²ρ²) · ln(√(nρ² + 1)/alpha)). For a difference of two arms GrowthBook takes n as
 * the units of both arms and sd as the standard error × √n; `compareArms` does the same.
 *
 * @example
 * confidenceSequenceHalfWidth({ sd: 1, n: 10_000, alpha: 0.05, tuningN: 10_000 }); // ≈ 0.0304 (fixed horizon: 0.0196)
 */
export function confidenceSequenceHalfWidth(options: { sd: number; n: number; alpha: number; tuningN: number }): number {
  const { sd, n, alpha, tuningN } = options;
  if (!(n > 0) || !(tuningN > 0) || !(alpha > 0 && alpha < 1)) return Number.NaN;
  const rho2 = sequentialRho(alpha, tuningN) ** 2;
  const nr2 = n * rho2 + 1;
  return sd * Math.sqrt(((2 * nr2) / (n * n * rho2)) * Math.log(Math.sqrt(nr2) / alpha));
}
