/**
 * The length-bias coefficient of a calibration report (`CalibrationReport.lengthBias`): the slope of a logistic
 * regression of the judge's positive verdict on the standardised length, minus the same slope for the gold labels.
 * Near 0: the judge is no more swayed by length than people are; positive: it favours longer answers (or, for a pair,
 * the longer side `a`).
 *
 * The model, fitted separately to the judge's labels and to gold on the same rows:
 *   logit P(positive) = b_group + β·z,   z = (length − mean) / sd over the rows (population sd, as StandardScaler)
 * with one free intercept per label id (criteria have different base rates) and a shared slope β, fitted by Newton's
 * method (exact to 1e-10 on the gradient) minimising Σ log-loss + ½·l2·β². The default l2 = 1 is scikit-learn's
 * `LogisticRegression()` default (C = 1, intercepts not penalised when there is one group), and keeps β finite when
 * length separates the labels. A label id on which the labels never vary carries no information about β once its
 * intercept is free, and is left out of that fit; with none left the slope is 0.
 *
 * Positive labels are `pass`, `a` (for a pair the length is a minus b) and `yes`; negative `fail`, `b`, `no`. Rows
 * where either side says something else (`not-applicable`, `tie`) are left out. ml-logistic-regression (npm) was
 * considered: it runs a fixed number of gradient steps and is not exact, and the problem is two-dimensional per group.
 */

const POSITIVE = new Set(['pass', 'a', 'yes']);
const NEGATIVE = new Set(['fail', 'b', 'no']);

/** 1, 0, or undefined when the label is neither positive nor negative. */
export function binaryOf(label: string): 0 | 1 | undefined {
  if (POSITIVE.has(label)) return 1;
  if (NEGATIVE.has(label)) return 0;
  return undefined;
}

export interface SlopeOptions {
  /** Ridge penalty on the slope (½·l2·β²); default 1 (scikit-learn's C = 1). 0: plain maximum likelihood. */
  l2?: number;
  maxIterations?: number;
}

function softplus(eta: number): number {
  return eta > 0 ? eta + Math.log1p(Math.exp(-eta)) : Math.log1p(Math.exp(eta));
}

function sigmoid(eta: number): number {
  if (eta >= 0) return 1 / (1 + Math.exp(-eta));
  const e = Math.exp(eta);
  return e / (1 + e);
}

/**
 * The slope β of `logit P(y = 1) = b[group] + β·x`, by Newton's method on the penalised log-likelihood. Groups whose
 * y never varies are left out; with no group left the slope is 0.
 *
 * @example
 * logisticSlope([0, 0, 0, 0], [-1.5, -0.5, 0.5, 1.5], [0, 1, 0, 1], { l2: 1 }); // ≈ 0.27
 */
export function logisticSlope(
  group: ArrayLike<number>,
  x: ArrayLike<number>,
  y: ArrayLike<number>,
  options: SlopeOptions = {},
): number {
  const l2 = options.l2 ?? 1;
  const maxIterations = options.maxIterations ?? 100;
  const n = group.length;
  // Drop groups with one class only; renumber the rest densely.
  const seen = new Map<number, { pos: number; neg: number }>();
  for (let i = 0; i < n; i++) {
    const s = seen.get(group[i]!) ?? { pos: 0, neg: 0 };
    if (y[i] === 1) s.pos++;
    else s.neg++;
    seen.set(group[i]!, s);
  }
  const dense = new Map<number, number>();
  for (const [g, s] of seen) if (s.pos > 0 && s.neg > 0) dense.set(g, dense.size);
  const G = dense.size;
  if (G === 0) return 0;
  const rows: number[] = [];
  for (let i = 0; i < n; i++) if (dense.has(group[i]!)) rows.push(i);
  const g = Int32Array.from(rows, (i) => dense.get(group[i]!)!);
  const xs = Float64Array.from(rows, (i) => x[i]!);
  const ys = Float64Array.from(rows, (i) => y[i]!);
  const m = rows.length;

  const b = new Float64Array(G);
  // Start each intercept at its group's log-odds.
  const pos = new Float64Array(G);
  const cnt = new Float64Array(G);
  for (let i = 0; i < m; i++) {
    pos[g[i]!]! += ys[i]!;
    cnt[g[i]!]! += 1;
  }
  for (let j = 0; j < G; j++) b[j] = Math.log(pos[j]! / (cnt[j]! - pos[j]!));
  let beta = 0;

  const loss = (bb: Float64Array, be: number): number => {
    let s = 0.5 * l2 * be * be;
    for (let i = 0; i < m; i++) {
      const eta = bb[g[i]!]! + be * xs[i]!;
      s += softplus(eta) - ys[i]! * eta;
    }
    return s;
  };

  const gradB = new Float64Array(G);
  const D = new Float64Array(G);
  const C = new Float64Array(G);
  const trialB = new Float64Array(G);
  let current = loss(b, beta);
  for (let iter = 0; iter < maxIterations; iter++) {
    gradB.fill(0);
    D.fill(0);
    C.fill(0);
    let gradBeta = l2 * beta;
    let E = l2;
    for (let i = 0; i < m; i++) {
      const j = g[i]!;
      const p = sigmoid(b[j]! + beta * xs[i]!);
      const r = p - ys[i]!;
      const w = p * (1 - p);
      gradB[j]! += r;
      gradBeta += r * xs[i]!;
      D[j]! += w;
      C[j]! += w * xs[i]!;
      E += w * xs[i]! * xs[i]!;
    }
    let maxGrad = Math.abs(gradBeta);
    for (let j = 0; j < G; j++) maxGrad = Math.max(maxGrad, Math.abs(gradB[j]!));
    if (maxGrad < 1e-10) break;
    // Solve the arrow-shaped Newton system by its Schur complement.
    let num = gradBeta;
    let den = E;
    for (let j = 0; j < G; j++) {
      const d = Math.max(D[j]!, 1e-300);
      num -= (C[j]! * gradB[j]!) / d;
      den -= (C[j]! * C[j]!) / d;
    }
    const dBeta = den > 0 ? num / den : 0;
    let step = 1;
    let improved = false;
    for (let half = 0; half < 50; half++) {
      for (let j = 0; j < G; j++) trialB[j] = b[j]! - (step * (gradB[j]! - C[j]! * dBeta)) / Math.max(D[j]!, 1e-300);
      const trialBeta = beta - step * dBeta;
      const l = loss(trialB, trialBeta);
      if (l <= current) {
        b.set(trialB);
        beta = trialBeta;
        improved = current - l > 0 || step === 1;
        current = l;
        break;
      }
      step /= 2;
    }
    if (!improved) break;
  }
  return beta;
}

export interface LengthBiasRow {
  /** The label id (criterion, `preference`, `mode:<id>`): one intercept each. */
  id: string;
  length: number;
  judge: string;
  gold: string;
}

export interface LengthBias {
  coefficient: number;
  judgeSlope: number;
  goldSlope: number;
  /** Rows used (both labels binary, length finite). */
  n: number;
}

/**
 * The length-bias coefficient over (label id, length, judge label, gold label) rows; `undefined` when fewer than two
 * rows are usable or every usable length is the same.
 *
 * @example
 * lengthBias(rows); // { coefficient: 0.84, judgeSlope: 0.91, goldSlope: 0.07, n: 400 }
 */
export function lengthBias(rows: readonly LengthBiasRow[], options: SlopeOptions = {}): LengthBias | undefined {
  const used = rows
    .map((r) => ({ r, j: binaryOf(r.judge), g: binaryOf(r.gold) }))
    .filter((u) => u.j !== undefined && u.g !== undefined && Number.isFinite(u.r.length));
  if (used.length < 2) return undefined;
  let mean = 0;
  for (const u of used) mean += u.r.length;
  mean /= used.length;
  let variance = 0;
  for (const u of used) variance += (u.r.length - mean) ** 2;
  const sd = Math.sqrt(variance / used.length);
  if (!(sd > 0)) return undefined;
  const ids = new Map<string, number>();
  const group = used.map((u) => {
    let code = ids.get(u.r.id);
    if (code === undefined) ids.set(u.r.id, (code = ids.size));
    return code;
  });
  const z = used.map((u) => (u.r.length - mean) / sd);
  const judgeSlope = logisticSlope(group, z, used.map((u) => u.j!), options);
  const goldSlope = logisticSlope(group, z, used.map((u) => u.g!), options);
  return { coefficient: judgeSlope - goldSlope, judgeSlope, goldSlope, n: used.length };
}
