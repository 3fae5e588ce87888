/**
 * The regularized incomplete beta function I_x(a, b): the kernel under Student's t distribution. Lentz's continued
 * fraction (Numerical Recipes §6.4), on whichever side of the mean (a + 1)/(a + b + 2) it converges fast, the other
 * side by symmetry I_x(a, b) = 1 − I_{1−x}(b, a).
 */
import { logGamma, stirlingCorrection } from './incomplete-gamma.ts';

const EPS = 1e-16;
const TINY = 1e-300;
const MAX_ITERATIONS = 100_000;

function fraction(a: number, b: number, x: number): number {
  const qab = a + b;
  const qap = a + 1;
  const qam = a - 1;
  let c = 1;
  let d = 1 - (qab * x) / qap;
  if (Math.abs(d) < TINY) d = TINY;
  d = 1 / d;
  let h = d;
  for (let m = 1; m < MAX_ITERATIONS; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (qab + m) * x) / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < EPS) break;
  }
  return h;
}

/**
 * ln B(a, b). When the larger argument is ≥ 15, ln Γ(a + b) − ln Γ(a) is taken as (a − ½)·log1p(b/a) + b·ln(a + b) − b
 * + δ(a + b) − δ(a), which does not lose digits to cancellation as the difference of two huge log-gammas does (Student's
 * t with a million degrees of freedom needs it).
 *
 * @example
 * logBeta(2, 3); // ln(1/12)
 */
export function logBeta(a: number, b: number): number {
  const big = Math.max(a, b);
  const small = Math.min(a, b);
  if (big < 15) return logGamma(a) + logGamma(b) - logGamma(a + b);
  const rise = (big - 0.5) * Math.log1p(small / big) + small * Math.log(big + small) - small + stirlingCorrection(big + small) - stirlingCorrection(big);
  return logGamma(small) - rise;
}

/**
 * I_x(a, b) for a, b > 0 and x in [0, 1]; `y` is 1 − x when the caller has it more precisely than 1 − x rounds
 * (x = ν/(ν + t²) near 1: y = t²/(ν + t²)).
 *
 * @example
 * regularizedBeta(0.5, 2, 2); // 0.5
 */
export function regularizedBeta(x: number, a: number, b: number, y = 1 - x): number {
  if (Number.isNaN(x) || Number.isNaN(y) || !(a > 0) || !(b > 0)) return Number.NaN;
  if (x <= 0) return 0;
  if (y <= 0) return 1;
  const logX = x < 0.5 ? Math.log(x) : Math.log1p(-y);
  const logY = y < 0.5 ? Math.log(y) : Math.log1p(-x);
  const front = Math.exp(a * logX + b * logY - logBeta(a, b));
  return x < (a + 1) / (a + b + 2) ? (front * fraction(a, b, x)) / a : 1 - (front * fraction(b, a, y)) / b;
}
