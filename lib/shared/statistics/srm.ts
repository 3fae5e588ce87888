/**
 * The sample-ratio-mismatch check: units per arm against the shares the assignment intended (Pearson's chi-squared,
 * df = arms − 1). A mismatch (p below 0.001 by default, as Fabijan et al. 2019 and the major platforms use) means the
 * assignment or the exposure logging is broken and no other number of the experiment can be trusted.
 */
import { regularizedGammaQ } from './incomplete-gamma.ts';

/** The default SRM threshold: p < 0.001. */
export const SRM_THRESHOLD = 0.001;

/**
 * P(χ²_df > x), the chi-squared survival function: Q(df/2, x/2), precise far into the tail.
 *
 * @example
 * chiSquaredSurvival(3.841458820694124, 1); // 0.05
 */
export function chiSquaredSurvival(x: number, df: number): number {
  if (Number.isNaN(x) || !(df > 0)) return Number.NaN;
  if (x <= 0) return 1;
  return regularizedGammaQ(df / 2, x / 2);
}

/**
 * Pearson's chi-squared test of observed units per arm against the expected shares (which need not sum to 1). Arms
 * with no positive expected share (a stopped arm) are left out of the test, and so are observed arms that are not
 * expected; fewer than two arms or no units: nothing to test (nulls, no mismatch).
 *
 * @example
 * sampleRatioMismatch({ control: 5000, treatment: 4850 }, { control: 0.5, treatment: 0.5 }); // { mismatch: false, pValue: 0.13, … }
 */
export function sampleRatioMismatch(
  observed: Record<string, number>,
  expectedShares: Record<string, number>,
  threshold = SRM_THRESHOLD,
): { chiSquared: number | null; pValue: number | null; mismatch: boolean } {
  const arms = Object.keys(expectedShares).filter((a) => (expectedShares[a] ?? 0) > 0);
  const shareTotal = arms.reduce((s, a) => s + expectedShares[a]!, 0);
  const total = arms.reduce((s, a) => s + (observed[a] ?? 0), 0);
  if (arms.length < 2 || total <= 0) return { chiSquared: null, pValue: null, mismatch: false };
  let chiSquared = 0;
  for (const a of arms) {
    const expected = (total * expectedShares[a]!) / shareTotal;
    chiSquared += ((observed[a] ?? 0) - expected) ** 2 / expected;
  }
  const pValue = chiSquaredSurvival(chiSquared, arms.length - 1);
  return { chiSquared, pValue, mismatch: pValue < threshold };
}
