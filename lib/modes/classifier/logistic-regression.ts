/**
 * Binary L2-regularised logistic regression on sparse rows, trained by L-BFGS (full batch, deterministic).
 *
 * Minimises  Σᵢ sᵢ·log(1 + exp(−ỹᵢ·(w·xᵢ + b)))  +  ‖w‖² / (2c)   (the bias is not regularised),
 * the objective of scikit-learn's `LogisticRegression(C=c, solver='lbfgs')`, with optional class balancing
 * (sᵢ scaled by n / (2·n_class), as `class_weight='balanced'`).
 */
export interface SparseRows {
  /** Feature indices of each row. */
  rows: Int32Array[];
  /** Values matching `rows`. */
  values: Float32Array[];
  features: number;
}

export interface LogisticOptions {
  c: number;
  sampleWeights?: readonly number[];
  balanced?: boolean;
  maxIterations?: number;
  /** Stop when the gradient's max-norm falls below this. */
  tolerance?: number;
}

export interface LogisticFit {
  weights: Float64Array;
  bias: number;
  iterations: number;
  loss: number;
}

/** Logit of a constant model: used when a mode has no positives (or no negatives) in the data. */
const SATURATED_LOGIT = 8;

export function fitLogisticRegression(x: SparseRows, y: readonly (0 | 1)[], options: LogisticOptions): LogisticFit {
  const n = x.rows.length;
  const f = x.features;
  const base = options.sampleWeights ?? y.map(() => 1);
  let wPos = 0;
  let wNeg = 0;
  for (let i = 0; i < n; i++) (y[i] === 1 ? (wPos += base[i]!) : (wNeg += base[i]!));
  if (wPos === 0 || wNeg === 0) {
    return { weights: new Float64Array(f), bias: wPos === 0 ? -SATURATED_LOGIT : SATURATED_LOGIT, iterations: 0, loss: 0 };
  }
  const total = wPos + wNeg;
  const s = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const classScale = options.balanced ? total / (2 * (y[i] === 1 ? wPos : wNeg)) : 1;
    s[i] = base[i]! * classScale;
  }
  const lambda = 1 / options.c;
  const dim = f + 1; // last entry: bias
  const z = new Float64Array(n);

  const lossAndGrad = (w: Float64Array, grad: Float64Array): number => {
    grad.fill(0);
    let loss = 0;
    const b = w[f]!;
    for (let i = 0; i < n; i++) {
      const idx = x.rows[i]!;
      const val = x.values[i]!;
      let zi = b;
      for (let j = 0; j < idx.length; j++) zi += w[idx[j]!]! * val[j]!;
      z[i] = zi;
      const yi = y[i]!;
      // log(1 + exp(zi)) − yi·zi, computed stably
      const softplus = zi > 0 ? zi + Math.log1p(Math.exp(-zi)) : Math.log1p(Math.exp(zi));
      loss += s[i]! * (softplus - yi * zi);
      const p = zi >= 0 ? 1 / (1 + Math.exp(-zi)) : Math.exp(zi) / (1 + Math.exp(zi));
      const g = s[i]! * (p - yi);
      for (let j = 0; j < idx.length; j++) grad[idx[j]!]! += g * val[j]!;
      grad[f]! += g;
    }
    let reg = 0;
    for (let j = 0; j < f; j++) {
      reg += w[j]! * w[j]!;
      grad[j]! += lambda * w[j]!;
    }
    return loss + 0.5 * lambda * reg;
  };

  const w = new Float64Array(dim);
  w[f] = Math.log(wPos / wNeg);
  const { value, iterations } = lbfgs(lossAndGrad, w, { maxIterations: options.maxIterations ?? 200, tolerance: options.tolerance ?? 1e-5 });
  return { weights: w.subarray(0, f), bias: w[f]!, iterations, loss: value };
}

/** Limited-memory BFGS with an Armijo backtracking line search; minimises in place, returns the final value. */
export function lbfgs(
  fg: (w: Float64Array, grad: Float64Array) => number,
  w: Float64Array,
  { maxIterations, tolerance, memory = 8 }: { maxIterations: number; tolerance: number; memory?: number },
): { value: number; iterations: number } {
  const dim = w.length;
  let g = new Float64Array(dim);
  let fx = fg(w, g);
  const sList: Float64Array[] = [];
  const yList: Float64Array[] = [];
  const rho: number[] = [];
  const d = new Float64Array(dim);
  const wNew = new Float64Array(dim);
  let gNew = new Float64Array(dim);
  const alpha = new Float64Array(memory);
  let it = 0;
  for (; it < maxIterations; it++) {
    if (maxAbs(g) < tolerance) break;
    // Two-loop recursion: d = −H·g
    for (let j = 0; j < dim; j++) d[j] = -g[j]!;
    for (let k = sList.length - 1; k >= 0; k--) {
      const a = rho[k]! * dot(sList[k]!, d);
      alpha[k] = a;
      axpy(-a, yList[k]!, d);
    }
    if (sList.length > 0) {
      const last = sList.length - 1;
      const gamma = dot(sList[last]!, yList[last]!) / dot(yList[last]!, yList[last]!);
      for (let j = 0; j < dim; j++) d[j]! *= gamma;
    } else {
      const norm = Math.sqrt(dot(g, g));
      for (let j = 0; j < dim; j++) d[j]! /= Math.max(norm, 1);
    }
    for (let k = 0; k < sList.length; k++) {
      const beta = rho[k]! * dot(yList[k]!, d);
      axpy(alpha[k]! - beta, sList[k]!, d);
    }
    let gd = dot(g, d);
    if (gd >= 0) {
      // Not a descent direction (numerical trouble): restart from steepest descent.
      sList.length = 0;
      yList.length = 0;
      rho.length = 0;
      for (let j = 0; j < dim; j++) d[j] = -g[j]!;
      gd = dot(g, d);
    }
    let step = 1;
    let fNew = Infinity;
    for (let ls = 0; ls < 40; ls++) {
      for (let j = 0; j < dim; j++) wNew[j] = w[j]! + step * d[j]!;
      fNew = fg(wNew, gNew);
      if (fNew <= fx + 1e-4 * step * gd) break;
      step *= 0.5;
    }
    if (!(fNew <= fx + 1e-4 * step * gd)) break;
    const sv = new Float64Array(dim);
    const yv = new Float64Array(dim);
    for (let j = 0; j < dim; j++) {
      sv[j] = wNew[j]! - w[j]!;
      yv[j] = gNew[j]! - g[j]!;
    }
    const sy = dot(sv, yv);
    if (sy > 1e-12) {
      if (sList.length === memory) {
        sList.shift();
        yList.shift();
        rho.shift();
      }
      sList.push(sv);
      yList.push(yv);
      rho.push(1 / sy);
    }
    w.set(wNew);
    const rel = (fx - fNew) / Math.max(Math.abs(fx), Math.abs(fNew), 1);
    fx = fNew;
    [g, gNew] = [gNew, g];
    if (rel < 1e-10) {
      it++;
      break;
    }
  }
  return { value: fx, iterations: it };
}

function dot(a: Float64Array, b: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}
function axpy(a: number, x: Float64Array, y: Float64Array): void {
  for (let i = 0; i < x.length; i++) y[i]! += a * x[i]!;
}
function maxAbs(a: Float64Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]!));
  return m;
}
