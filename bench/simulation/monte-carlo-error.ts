/**
 * How far a Monte-Carlo figure may stray from its expected value by chance alone, worked out rather than guessed:
 *
 * - a rate over R independent replications is Binomial(R, p) / R: `binomialRange` gives the exact central range that
 *   holds with probability ≥ 1 − `tail` (default 0.001), from the binomial's own distribution (no normal
 *   approximation, so it is right for rates near 0 or 1 too);
 * - a mean over replications carries its standard error (sample sd / √R): `meanWithError`.
 *
 * @example
 * const { low, high } = binomialRange(500, 0.05);   // counts of false positives that chance alone explains
 * const { mean, se } = meanWithError(reductions);   // the mean CUPED variance reduction and its standard error
 */

/** Binomial(n, p) probabilities of 0..n, from the log-pmf (stable for n in the tens of thousands). */
function binomialPmf(n: number, p: number): number[] {
  const pmf = new Array<number>(n + 1).fill(0);
  if (p <= 0) {
    pmf[0] = 1;
    return pmf;
  }
  if (p >= 1) {
    pmf[n] = 1;
    return pmf;
  }
  let logChoose = 0;
  for (let k = 0; k <= n; k++) {
    if (k > 0) logChoose += Math.log(n - k + 1) - Math.log(k);
    pmf[k] = Math.exp(logChoose + k * Math.log(p) + (n - k) * Math.log1p(-p));
  }
  return pmf;
}

export interface CountRange {
  /** Fewest hits chance explains (P(X < low) ≤ tail/2). */
  low: number;
  /** Most hits chance explains (P(X > high) ≤ tail/2). */
  high: number;
  /** The same as rates (÷ n). */
  lowRate: number;
  highRate: number;
}

/**
 * The central range of Binomial(n, p) holding with probability ≥ 1 − tail: each side cut where its tail mass stays
 * ≤ tail / 2.
 *
 * @example
 * binomialRange(1000, 0.8); // { low: 750, high: 848, … } (roughly ±3.3 standard errors)
 */
export function binomialRange(n: number, p: number, tail = 0.001): CountRange {
  const pmf = binomialPmf(n, p);
  let low = 0;
  let below = 0;
  while (low < n && below + pmf[low]! <= tail / 2) below += pmf[low++]!;
  let high = n;
  let above = 0;
  while (high > 0 && above + pmf[high]! <= tail / 2) above += pmf[high--]!;
  return { low, high, lowRate: low / n, highRate: high / n };
}

/**
 * The mean of `values` and its standard error.
 *
 * @example
 * meanWithError([0.4, 0.5, 0.45]); // { mean: 0.45, se: 0.0289, n: 3 }
 */
export function meanWithError(values: readonly number[]): { mean: number; se: number; n: number } {
  const n = values.length;
  const mean = values.reduce((s, v) => s + v, 0) / n;
  const variance = n > 1 ? values.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1) : 0;
  return { mean, se: Math.sqrt(variance / n), n };
}

/**
 * The sample variance of `values` (n − 1).
 *
 * @example
 * sampleVarianceOf([1, 2, 3]); // 1
 */
export function sampleVarianceOf(values: readonly number[]): number {
  const { mean, n } = meanWithError(values);
  return values.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1);
}
