/**
 * Quality numbers for a multi-label classifier: per-mode precision, recall and F1, their micro and macro averages,
 * exact-set accuracy, and calibration of a confidence (reliability bins and expected calibration error).
 * Used by `npm run eval:classifier` for the local classifier and the chain alike.
 */

export interface ModeScore {
  mode: string;
  precision: number;
  recall: number;
  f1: number;
  /** Items whose true labels include the mode. */
  support: number;
  tp: number;
  fp: number;
  fn: number;
}

export interface MultiLabelMetrics {
  perMode: ModeScore[];
  micro: { precision: number; recall: number; f1: number };
  /** Unweighted mean over modes that have support or predictions. */
  macro: { precision: number; recall: number; f1: number };
  /** Share of items whose predicted set equals the true set (including both empty). */
  exactMatch: number;
  items: number;
}

const ratio = (a: number, b: number): number => (b === 0 ? 0 : a / b);
const f1Of = (p: number, r: number): number => (p + r === 0 ? 0 : (2 * p * r) / (p + r));

export function multiLabelMetrics(predicted: readonly (readonly string[])[], truth: readonly (readonly string[])[], modes: readonly string[]): MultiLabelMetrics {
  if (predicted.length !== truth.length) throw new RangeError('predicted and truth differ in length');
  const counts = new Map(modes.map((m) => [m, { tp: 0, fp: 0, fn: 0 }]));
  let exact = 0;
  predicted.forEach((pred, i) => {
    const p = new Set(pred);
    const t = new Set(truth[i]);
    if (p.size === t.size && [...p].every((m) => t.has(m))) exact++;
    for (const m of modes) {
      const c = counts.get(m)!;
      if (p.has(m) && t.has(m)) c.tp++;
      else if (p.has(m)) c.fp++;
      else if (t.has(m)) c.fn++;
    }
  });
  const perMode = modes.map((mode) => {
    const { tp, fp, fn } = counts.get(mode)!;
    const precision = ratio(tp, tp + fp);
    const recall = ratio(tp, tp + fn);
    return { mode, precision, recall, f1: f1Of(precision, recall), support: tp + fn, tp, fp, fn };
  });
  const tp = perMode.reduce((a, m) => a + m.tp, 0);
  const fp = perMode.reduce((a, m) => a + m.fp, 0);
  const fn = perMode.reduce((a, m) => a + m.fn, 0);
  const microP = ratio(tp, tp + fp);
  const microR = ratio(tp, tp + fn);
  const active = perMode.filter((m) => m.support > 0 || m.fp > 0);
  const mean = (xs: number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, x) => a + x, 0) / xs.length);
  return {
    perMode,
    micro: { precision: microP, recall: microR, f1: f1Of(microP, microR) },
    macro: { precision: mean(active.map((m) => m.precision)), recall: mean(active.map((m) => m.recall)), f1: mean(active.map((m) => m.f1)) },
    exactMatch: ratio(exact, predicted.length),
    items: predicted.length,
  };
}

export interface ReliabilityBin {
  /** [lower, upper) of confidence; the last bin includes 1. */
  lower: number;
  upper: number;
  count: number;
  meanConfidence: number;
  accuracy: number;
}

export interface Calibration {
  bins: ReliabilityBin[];
  /** Expected calibration error: Σ (count / n) · |accuracy − meanConfidence| over bins. */
  ece: number;
  /** Mean squared error of confidence against correctness. */
  brier: number;
  items: number;
}

/** Equal-width reliability bins of a confidence against whether the answer was right. */
export function calibration(points: readonly { confidence: number; correct: boolean }[], binCount = 10): Calibration {
  const bins: ReliabilityBin[] = Array.from({ length: binCount }, (_, i) => ({
    lower: i / binCount,
    upper: (i + 1) / binCount,
    count: 0,
    meanConfidence: 0,
    accuracy: 0,
  }));
  let brier = 0;
  for (const p of points) {
    const b = bins[Math.min(binCount - 1, Math.max(0, Math.floor(p.confidence * binCount)))]!;
    b.count++;
    b.meanConfidence += p.confidence;
    b.accuracy += p.correct ? 1 : 0;
    brier += (p.confidence - (p.correct ? 1 : 0)) ** 2;
  }
  let ece = 0;
  for (const b of bins) {
    if (b.count === 0) continue;
    b.meanConfidence /= b.count;
    b.accuracy /= b.count;
    ece += (b.count / points.length) * Math.abs(b.accuracy - b.meanConfidence);
  }
  return { bins, ece, brier: ratio(brier, points.length), items: points.length };
}
