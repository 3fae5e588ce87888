/**
 * The standard normal distribution: its cdf (through the incomplete gamma, so a tail of 1e-100 keeps its digits) and
 * its quantile (Acklam's rational approximation, polished by one Halley step against the cdf: full double precision).
 */
import { regularizedGammaQ } from './incomplete-gamma.ts';

/** The two-sided 95% critical value, Φ⁻¹(0.975). */
export const Z95 = 1.959963984540054;

/**
 * Φ(x), the standard normal cdf.
 *
 * @example
 * normalCdf(1.959963984540054); // 0.975
 */
export function normalCdf(x: number): number {
  if (Number.isNaN(x)) return Number.NaN;
  // Φ(x) = ½·erfc(−x/√2) and erfc(z) = Q(½, z²).
  const tail = 0.5 * regularizedGammaQ(0.5, (x * x) / 2);
  return x < 0 ? tail : 1 - tail;
}

const A = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
const B = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
const C = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
const D = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
const P_LOW = 0.02425;

/** Acklam's approximation (relative error < 1.2e-9), for p ≤ ½. */
function acklam(p: number): number {
  if (p < P_LOW) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (((((C[0]! * q + C[1]!) * q + C[2]!) * q + C[3]!) * q + C[4]!) * q + C[5]!) / ((((D[0]! * q + D[1]!) * q + D[2]!) * q + D[3]!) * q + 1);
  }
  const q = p - 0.5;
  const r = q * q;
  return ((((((A[0]! * r + A[1]!) * r + A[2]!) * r + A[3]!) * r + A[4]!) * r + A[5]!) * q) / (((((B[0]! * r + B[1]!) * r + B[2]!) * r + B[3]!) * r + B[4]!) * r + 1);
}

/**
 * Φ⁻¹(p), the standard normal quantile; −∞ at 0, +∞ at 1, NaN outside [0, 1].
 *
 * @example
 * normalQuantile(0.975); // 1.959963984540054
 */
export function normalQuantile(p: number): number {
  if (Number.isNaN(p) || p < 0 || p > 1) return Number.NaN;
  if (p === 0) return Number.NEGATIVE_INFINITY;
  if (p === 1) return Number.POSITIVE_INFINITY;
  // The upper half by symmetry: 1 − p is exact there, and the lower tail's cdf keeps its relative precision.
  if (p > 0.5) return -normalQuantile(1 - p);
  let x = acklam(p);
  for (let i = 0; i < 2; i++) {
    const e = normalCdf(x) - p;
    const u = e * Math.sqrt(2 * Math.PI) * Math.exp((x * x) / 2);
    x -= u / (1 + (x * u) / 2);
  }
  return x;
}
