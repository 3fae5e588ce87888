/**
 * Seeded percentile bootstrap for agreement statistics over paired nominal labels.
 *
 * Items are coded once into confusion-matrix cells (`gold·k + judge`); a resample draws n item indices with
 * replacement and only counts cells into a k×k matrix, from which kappa and alpha are computed. 10,000 items ×
 * 1,000 resamples is 10⁷ draws and counts: about a tenth of a second. The generator is sfc32 seeded through splitmix32, so
 * a seed (and the item order) fixes the interval exactly, on any machine.
 *
 * Resamples on which a statistic is undefined (every drawn item in one class) are left out of its percentiles; the
 * interval is the 2.5th and 97.5th percentile of the rest, interpolated linearly (numpy's default). When no resample
 * is defined, the interval collapses to the estimate.
 */
import { alphaFromCounts, kappaFromCounts } from './agreement.ts';

/** A uniform generator of 32-bit unsigned integers. */
export type Random32 = () => number;

function splitmix32(seed: number): Random32 {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/**
 * A seeded sfc32 generator of uint32 values; the same seed gives the same sequence everywhere.
 *
 * @example
 * const next = seededRandom(7); next(); // the same uint32 on every run and machine
 */
export function seededRandom(seed: number): Random32 {
  const init = splitmix32(seed);
  let a = init();
  let b = init();
  let c = init();
  let d = init();
  const next = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) >>> 0;
    return t >>> 0;
  };
  for (let i = 0; i < 12; i++) next();
  return next;
}

/**
 * FNV-1a of a string, to give each label id its own bootstrap stream from one seed (so a criterion's interval does
 * not depend on which other criteria are in the report).
 *
 * @example
 * streamSeed(42, 'correctness'); // a fixed uint32
 */
export function streamSeed(seed: number, key: string): number {
  let h = 0x811c9dc5 ^ (seed >>> 0);
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/**
 * The p-th percentile (0–100) of sorted values, interpolated linearly between closest ranks (numpy's `percentile`
 * default).
 *
 * @example
 * percentileSorted([1, 2, 3, 4], 50); // 2.5
 */
export function percentileSorted(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const rank = (p / 100) * (n - 1);
  const lo = Math.floor(rank);
  const hi = Math.min(n - 1, lo + 1);
  const f = rank - lo;
  return sorted[lo]! + f * (sorted[hi]! - sorted[lo]!);
}

export interface BootstrapInput {
  /** Each item's cell in the k×k confusion matrix: gold·k + judge. */
  cells: Int32Array | readonly number[];
  /** Number of classes. */
  k: number;
  resamples: number;
  seed: number;
}

export interface BootstrapIntervals {
  kappa: { low: number; high: number; defined: number } | null;
  alpha: { low: number; high: number; defined: number } | null;
}

function interval(values: Float64Array, count: number): { low: number; high: number; defined: number } | null {
  if (count === 0) return null;
  const sorted = values.subarray(0, count).sort();
  return { low: percentileSorted(sorted, 2.5), high: percentileSorted(sorted, 97.5), defined: count };
}

/**
 * Percentile bootstrap 95% intervals of Cohen's kappa and Krippendorff's alpha over paired items coded as cells.
 * `null` for a statistic that no resample defines. `defined` counts the resamples used.
 *
 * @example
 * const cells = Int32Array.from(gold.map((g, i) => g * 2 + judge[i]));
 * bootstrapAgreement({ cells, k: 2, resamples: 1000, seed: 1 }); // { kappa: { low: 0.61, high: 0.79, defined: 1000 }, alpha: … }
 */
export function bootstrapAgreement(input: BootstrapInput): BootstrapIntervals {
  const { cells, k, resamples } = input;
  const n = cells.length;
  if (n === 0 || resamples <= 0) return { kappa: null, alpha: null };
  // t·n below must stay exact in a double (t < 2³², n < 2²¹).
  if (n >= 2 ** 21) throw new RangeError(`bootstrap over ${n} items: at most 2,097,151`);
  const cellArray = cells instanceof Int32Array ? cells : Int32Array.from(cells);
  const counts = new Int32Array(k * k);
  const kappas = new Float64Array(resamples);
  const alphas = new Float64Array(resamples);
  let nk = 0;
  let na = 0;
  // sfc32 inlined (the same sequence as seededRandom(seed)): a closure call per draw costs more than the draw itself.
  const init = splitmix32(input.seed);
  let a = init();
  let b = init();
  let c = init();
  let d = init();
  let t: number;
  for (let i = 0; i < 12; i++) {
    t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) >>> 0;
  }
  // Multiply-shift maps a uint32 to [0, n) with a bias below n / 2³², far under any interval's precision.
  for (let r = 0; r < resamples; r++) {
    counts.fill(0);
    for (let i = 0; i < n; i++) {
      t = (((a + b) >>> 0) + d) >>> 0;
      d = (d + 1) >>> 0;
      a = b ^ (b >>> 9);
      b = (c + (c << 3)) >>> 0;
      c = (c << 21) | (c >>> 11);
      c = (c + t) >>> 0;
      counts[cellArray[((t * n) / 4294967296) | 0]!]!++;
    }
    const kappa = kappaFromCounts(counts, k);
    if (kappa !== null) kappas[nk++] = kappa;
    const alpha = alphaFromCounts(counts, k);
    if (alpha !== null) alphas[na++] = alpha;
  }
  return { kappa: interval(kappas, nk), alpha: interval(alphas, na) };
}
