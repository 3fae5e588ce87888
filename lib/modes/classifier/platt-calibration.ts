/**
 * Platt scaling: p = σ(a·z + b) fitted on held-out logits, with Platt's smoothed targets, by Newton's method with
 * backtracking (Lin, Lin & Weng, "A note on Platt's probabilistic outputs for support vector machines", 2007).
 * Class-balanced training inflates the logits of rare modes; this maps them back to frequencies seen on validation.
 */
export interface PlattParams {
  a: number;
  b: number;
}

export function fitPlatt(logits: readonly number[], labels: readonly (0 | 1)[]): PlattParams {
  const n = logits.length;
  let pos = 0;
  for (const y of labels) pos += y;
  const neg = n - pos;
  if (pos === 0 || neg === 0) return { a: 1, b: 0 };
  const hiT = (pos + 1) / (pos + 2);
  const loT = 1 / (neg + 2);
  const t = labels.map((y) => (y === 1 ? hiT : loT));
  // Parameterised as p = 1 / (1 + exp(A z + B)) in the paper; we keep A = -a, B = -b.
  let A = 0;
  let B = Math.log((neg + 1) / (pos + 1));
  const objective = (A_: number, B_: number): number => {
    let f = 0;
    for (let i = 0; i < n; i++) {
      const fApB = logits[i]! * A_ + B_;
      f += fApB >= 0 ? t[i]! * fApB + Math.log1p(Math.exp(-fApB)) : (t[i]! - 1) * fApB + Math.log1p(Math.exp(fApB));
    }
    return f;
  };
  let fval = objective(A, B);
  const sigma = 1e-12;
  for (let it = 0; it < 100; it++) {
    let h11 = sigma;
    let h22 = sigma;
    let h21 = 0;
    let g1 = 0;
    let g2 = 0;
    for (let i = 0; i < n; i++) {
      const z = logits[i]!;
      const fApB = z * A + B;
      const p = fApB >= 0 ? Math.exp(-fApB) / (1 + Math.exp(-fApB)) : 1 / (1 + Math.exp(fApB));
      const q = 1 - p;
      const d2 = p * q;
      h11 += z * z * d2;
      h22 += d2;
      h21 += z * d2;
      const d1 = t[i]! - p;
      g1 += z * d1;
      g2 += d1;
    }
    if (Math.abs(g1) < 1e-7 && Math.abs(g2) < 1e-7) break;
    const det = h11 * h22 - h21 * h21;
    const dA = -(h22 * g1 - h21 * g2) / det;
    const dB = -(-h21 * g1 + h11 * g2) / det;
    const gd = g1 * dA + g2 * dB;
    let step = 1;
    let improved = false;
    while (step >= 1e-10) {
      const nA = A + step * dA;
      const nB = B + step * dB;
      const nf = objective(nA, nB);
      if (nf < fval + 1e-4 * step * gd) {
        A = nA;
        B = nB;
        fval = nf;
        improved = true;
        break;
      }
      step /= 2;
    }
    if (!improved) break;
  }
  return { a: -A, b: -B };
}
