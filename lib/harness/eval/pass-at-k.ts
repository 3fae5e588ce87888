/**
 * The unbiased pass@k estimator (Chen et al. 2021, "Evaluating Large Language Models Trained on Code"):
 * with n attempts of which c passed, pass@k = 1 - C(n-c, k) / C(n, k), computed as a product so large n does not
 * overflow. Averaging it over tasks gives the suite's pass@k; it needs n >= k.
 *
 * @example
 * passAtK(5, 2, 2); // 1 - C(3,2)/C(5,2) = 0.7
 */
export function passAtK(n: number, c: number, k: number): number {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k) || n < 0 || c < 0 || c > n || k < 1) {
    throw new RangeError(`passAtK needs integers n >= c >= 0 and k >= 1 (got n=${n}, c=${c}, k=${k})`);
  }
  if (k > n) throw new RangeError(`passAtK needs n >= k (got n=${n}, k=${k})`);
  if (n - c < k) return 1;
  let miss = 1;
  for (let i = n - c + 1; i <= n; i++) miss *= 1 - k / i;
  return 1 - miss;
}
