/**
 * Adjusted p-values across the metrics of one experiment: Holm (family-wise error, for primary + secondary +
 * guardrails) and Benjamini–Hochberg (false discovery rate, for the many failure-mode rates). A null p-value (a
 * metric that could not be tested) is neither adjusted nor counted in the family.
 */

function tested(pValues: readonly (number | null)[]): Array<{ p: number; i: number }> {
  return pValues.flatMap((p, i) => (p === null || Number.isNaN(p) ? [] : [{ p, i }])).sort((a, b) => a.p - b.p || a.i - b.i);
}

/**
 * Holm's step-down adjustment: the k-th smallest of m p-values becomes max over j ≤ k of min(1, (m − j + 1)·p_(j)).
 *
 * @example
 * holmAdjust([0.01, 0.04, null, 0.03]); // [0.03, 0.06, null, 0.06]
 */
export function holmAdjust(pValues: readonly (number | null)[]): (number | null)[] {
  const sorted = tested(pValues);
  const out: (number | null)[] = pValues.map(() => null);
  const m = sorted.length;
  let running = 0;
  sorted.forEach(({ p, i }, k) => {
    running = Math.max(running, Math.min(1, (m - k) * p));
    out[i] = running;
  });
  return out;
}

/**
 * Benjamini–Hochberg's step-up adjustment: the k-th smallest of m p-values becomes min over j ≥ k of min(1, m·p_(j)/j).
 *
 * @example
 * benjaminiHochbergAdjust([0.01, 0.04, 0.03]); // [0.03, 0.04, 0.04]
 */
export function benjaminiHochbergAdjust(pValues: readonly (number | null)[]): (number | null)[] {
  const sorted = tested(pValues);
  const out: (number | null)[] = pValues.map(() => null);
  const m = sorted.length;
  let running = 1;
  for (let k = m - 1; k >= 0; k--) {
    const { p, i } = sorted[k]!;
    running = Math.min(running, Math.min(1, (m * p) / (k + 1)));
    out[i] = running;
  }
  return out;
}
