/**
 * Agreement statistics between a judge and people (or two people), nominal labels: Cohen's kappa, Krippendorff's
 * alpha, the confusion matrix, per-class precision and recall, accuracy. Pure and exact; the functions on counts
 * (`kappaFromCounts`, `alphaFromCounts`) are what the bootstrap calls a thousand times.
 *
 * Undefined values follow scikit-learn where it answers NaN, and are `null` here:
 *  - kappa is undefined when chance agreement is 1 (both raters used one and the same class on every item, or there
 *    are no items): `cohen_kappa_score` answers NaN, we answer `null`. It is never reported as 1.
 *  - alpha is undefined when there is no variation at all among the pairable values (expected disagreement 0) or
 *    fewer than two pairable values: `null`.
 *  - precision of a class the judge never chose, recall of a class with no gold support: `null` (scikit-learn answers 0
 *    with an UndefinedMetricWarning, `zero_division='warn'`).
 */

/** Known vocabularies in their canonical order; labels outside them follow, sorted. */
const CANONICAL_ORDER: readonly string[] = ['pass', 'fail', 'not-applicable', 'a', 'b', 'tie', 'yes', 'no'];

/**
 * A stable order of the labels in `values`: the known verdicts first in canonical order (`pass`, `fail`,
 * `not-applicable`, `a`, `b`, `tie`, `yes`, `no`), then any other label, sorted by code unit.
 *
 * @example
 * labelOrder(['fail', 'pass', 'zzz', 'fail']); // ['pass', 'fail', 'zzz']
 */
export function labelOrder(values: Iterable<string>): string[] {
  const seen = new Set(values);
  const known = CANONICAL_ORDER.filter((l) => seen.has(l));
  const other = [...seen].filter((l) => !CANONICAL_ORDER.includes(l)).sort();
  return [...known, ...other];
}

export interface Confusion {
  labels: string[];
  /** labels × labels; rows the first rater (gold), columns the second (judge). */
  matrix: number[][];
}

function assertSameLength(a: readonly unknown[], b: readonly unknown[]): void {
  if (a.length !== b.length) throw new RangeError(`two raters need as many labels each (${a.length} vs ${b.length})`);
}

/**
 * The confusion matrix, rows `gold`, columns `judge`, in `labels` order (default: `labelOrder` of both).
 * A label outside `labels` is an error.
 *
 * @example
 * confusionMatrix(['pass', 'fail', 'pass'], ['pass', 'pass', 'pass']);
 * // { labels: ['pass', 'fail'], matrix: [[2, 0], [1, 0]] }
 */
export function confusionMatrix(gold: readonly string[], judge: readonly string[], labels?: readonly string[]): Confusion {
  assertSameLength(gold, judge);
  const order = labels ? [...labels] : labelOrder([...gold, ...judge]);
  const index = new Map(order.map((l, i) => [l, i]));
  const matrix = order.map(() => order.map(() => 0));
  for (let i = 0; i < gold.length; i++) {
    const g = index.get(gold[i]!);
    const j = index.get(judge[i]!);
    if (g === undefined || j === undefined) throw new RangeError(`label ${g === undefined ? gold[i] : judge[i]} is not in the labels`);
    matrix[g]![j]!++;
  }
  return { labels: order, matrix };
}

/**
 * Cohen's kappa from a k×k count matrix stored row-major in `counts` (rows rater 1, columns rater 2), computed as
 * scikit-learn does (1 − observed disagreement / expected disagreement). `null` when undefined (no items, or chance
 * agreement 1).
 *
 * @example
 * kappaFromCounts(new Float64Array([20, 5, 10, 15]), 2); // 0.4
 */
export function kappaFromCounts(counts: ArrayLike<number>, k: number): number | null {
  let n = 0;
  let diag = 0;
  const rows = new Float64Array(k);
  const cols = new Float64Array(k);
  for (let r = 0; r < k; r++) {
    for (let c = 0; c < k; c++) {
      const v = counts[r * k + c]!;
      n += v;
      rows[r]! += v;
      cols[c]! += v;
      if (r === c) diag += v;
    }
  }
  if (n === 0) return null;
  let chance = 0;
  for (let c = 0; c < k; c++) chance += rows[c]! * cols[c]!;
  const expectedDisagreement = n - chance / n;
  if (expectedDisagreement <= 0) return null;
  return 1 - (n - diag) / expectedDisagreement;
}

/**
 * Krippendorff's alpha (nominal) for two raters with no missing values, from the same k×k count matrix: the
 * coincidence matrix is the counts plus their transpose. `null` when undefined.
 *
 * @example
 * alphaFromCounts(new Float64Array([20, 5, 10, 15]), 2); // 0.4
 */
export function alphaFromCounts(counts: ArrayLike<number>, k: number): number | null {
  let n = 0;
  let diag = 0;
  const margins = new Float64Array(k);
  for (let r = 0; r < k; r++) {
    for (let c = 0; c < k; c++) {
      const v = counts[r * k + c]!;
      n += v;
      margins[r]! += v;
      margins[c]! += v;
      if (r === c) diag += v;
    }
  }
  const values = 2 * n;
  if (values < 2) return null;
  let sumSquares = 0;
  for (let c = 0; c < k; c++) sumSquares += margins[c]! * margins[c]!;
  const expected = values * values - sumSquares; // Σ_{c≠k} n_c·n_k
  if (expected <= 0) return null;
  return 1 - ((values - 1) * 2 * (n - diag)) / expected;
}

function flatCounts(confusion: Confusion): Float64Array {
  const k = confusion.labels.length;
  const out = new Float64Array(k * k);
  for (let r = 0; r < k; r++) for (let c = 0; c < k; c++) out[r * k + c] = confusion.matrix[r]![c]!;
  return out;
}

/**
 * Cohen's kappa between two raters of the same items (nominal, unweighted), as scikit-learn's `cohen_kappa_score`;
 * `null` where that answers NaN (one and the same class everywhere, or no items).
 *
 * @example
 * cohenKappa(['pass', 'pass', 'fail', 'fail'], ['pass', 'fail', 'fail', 'fail']); // 0.5
 */
export function cohenKappa(a: readonly string[], b: readonly string[]): number | null {
  const confusion = confusionMatrix(a, b);
  return kappaFromCounts(flatCounts(confusion), confusion.labels.length);
}

/** A missing value in reliability data. */
export type MaybeLabel = string | null | undefined;

/**
 * Krippendorff's alpha for nominal data, any number of raters, missing values allowed. `data` is the reliability
 * data matrix: one row per rater (coder), one column per unit, `null`/`undefined` where the rater gave no value.
 * Units with fewer than two values are not pairable and are left out. `null` when undefined (no pairable values, or
 * no variation among them).
 *
 * @example
 * krippendorffAlpha([
 *   ['a', 'b', null],
 *   ['a', 'b', 'b'],
 *   ['a', 'a', 'b'],
 * ]); // 0.444…
 */
export function krippendorffAlpha(data: readonly (readonly MaybeLabel[])[]): number | null {
  const units = data.reduce((m, row) => Math.max(m, row.length), 0);
  const index = new Map<string, number>();
  const perUnit: number[][] = [];
  for (let u = 0; u < units; u++) {
    const vals: number[] = [];
    for (const row of data) {
      const v = row[u];
      if (v === null || v === undefined) continue;
      let code = index.get(v);
      if (code === undefined) index.set(v, (code = index.size));
      vals.push(code);
    }
    if (vals.length >= 2) perUnit.push(vals);
  }
  const k = index.size;
  const coincidence = new Float64Array(k * k);
  for (const vals of perUnit) {
    const m = vals.length;
    const unitCounts = new Float64Array(k);
    for (const v of vals) unitCounts[v]!++;
    for (let c = 0; c < k; c++) {
      const nc = unitCounts[c]!;
      if (nc === 0) continue;
      for (let d = 0; d < k; d++) {
        const nd = unitCounts[d]!;
        if (nd === 0) continue;
        coincidence[c * k + d]! += (c === d ? nc * (nc - 1) : nc * nd) / (m - 1);
      }
    }
  }
  const margins = new Float64Array(k);
  let n = 0;
  let observed = 0;
  for (let c = 0; c < k; c++) {
    for (let d = 0; d < k; d++) {
      const v = coincidence[c * k + d]!;
      margins[c]! += v;
      n += v;
      if (c !== d) observed += v;
    }
  }
  if (n < 2) return null;
  let expected = 0;
  for (let c = 0; c < k; c++) for (let d = 0; d < k; d++) if (c !== d) expected += margins[c]! * margins[d]!;
  if (expected <= 0) return null;
  return 1 - ((n - 1) * observed) / expected;
}

export interface ClassMetrics {
  /** Of the items the judge put in this class, the share gold also put there; `null` when the judge never chose it. */
  precision: number | null;
  /** Of the gold items of this class, the share the judge put there; `null` when gold has none. */
  recall: number | null;
  /** Gold items of this class. */
  support: number;
}

/**
 * Per class precision, recall and support of the judge (columns) against gold (rows).
 *
 * @example
 * perClassMetrics({ labels: ['pass', 'fail'], matrix: [[2, 0], [1, 0]] });
 * // { pass: { precision: 0.666…, recall: 1, support: 2 }, fail: { precision: null, recall: 0, support: 1 } }
 */
export function perClassMetrics(confusion: Confusion): Record<string, ClassMetrics> {
  const out: Record<string, ClassMetrics> = {};
  const { labels, matrix } = confusion;
  labels.forEach((label, i) => {
    const support = matrix[i]!.reduce((s, v) => s + v, 0);
    const predicted = matrix.reduce((s, row) => s + row[i]!, 0);
    const hit = matrix[i]![i]!;
    out[label] = { precision: predicted === 0 ? null : hit / predicted, recall: support === 0 ? null : hit / support, support };
  });
  return out;
}

/**
 * The share of items on the diagonal; `null` with no items.
 *
 * @example
 * accuracy({ labels: ['pass', 'fail'], matrix: [[2, 0], [1, 0]] }); // 0.666…
 */
export function accuracy(confusion: Confusion): number | null {
  let n = 0;
  let diag = 0;
  confusion.matrix.forEach((row, r) => row.forEach((v, c) => ((n += v), r === c && (diag += v))));
  return n === 0 ? null : diag / n;
}
