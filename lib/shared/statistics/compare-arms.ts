/**
 * One treatment arm against the control on one metric, from each arm's sufficient statistics (per-unit values), as
 * GrowthBook's frequentist engine does it: the relative lift (t − c)/c with its variance by the delta method
 * (var_t/(c²·n_t) + var_c·t²/(c⁴·n_c)), its fixed-horizon interval and p-value by Welch's t (Welch–Satterthwaite
 * degrees of freedom); a ratio metric's arm value ΣX/ΣY with its own delta-method variance; CUPED
 * (Deng et al. 2013) on the pre-period covariate with the slope θ pooled within arms (the ANCOVA slope: the
 * difference equals the treatment coefficient of OLS X ~ arm + C); the always-valid interval of `sequential.ts`; a
 * Bayesian chance to win under a flat prior (the lift's normal approximation, GrowthBook's default). Intervals stay
 * in their bounds: a relative lift is never below −1 (and a rate's never above 1/c − 1). No better / worse below
 * the minimum sample, and `rule` says which rule gave the verdict.
 */
import { MIN_UNITS_PER_ARM } from './minimum-sample.ts';
import { hasCovariate, hasDenominator, sampleCovariance, sampleVariance, type ArmMoments } from './moments.ts';
import { normalCdf, normalQuantile } from './normal.ts';
import { confidenceSequenceHalfWidth } from './sequential.ts';
import { studentTCdf, studentTQuantile } from './student-t.ts';
import type { Interval } from './wilson.ts';

export type MetricKind = 'binomial' | 'mean' | 'ratio';

export interface CompareOptions {
  kind: MetricKind;
  direction: 'increase' | 'decrease';
  /** Default 0.05. */
  alpha?: number;
  /** Use the covariate C when both arms carry it and kind !== 'ratio'. */
  cuped?: boolean;
  /** Units per arm the confidence sequence is tuned for (the planned sample); absent → no sequential interval. */
  sequentialTuningUnits?: number;
  /** Default MIN_UNITS_PER_ARM. */
  minUnitsPerArm?: number;
  /** The CUPED slope pooled over all arms (computed by the caller with pooledCupedTheta); else from these two arms. */
  theta?: number;
}

export interface ArmComparison {
  /** Each arm's metric value and its standard error as measured (not CUPED-adjusted). */
  controlValue: number | null;
  treatmentValue: number | null;
  controlSe: number | null;
  treatmentSe: number | null;
  /** treatment − control (CUPED-adjusted when cuped.applied). */
  difference: number | null;
  /** (treatment − control) / control (CUPED-adjusted when cuped.applied); null when the control's value is not > 0. */
  relativeLift: number | null;
  /** Relative lift, fixed horizon, 1 − alpha (Welch's t). */
  ci: Interval | null;
  /** Relative lift, always valid (asymptotic confidence sequence). */
  sequentialCi: Interval | null;
  /** Two-sided, fixed horizon (Welch's t), of the statistic the intervals are built on. */
  pValue: number | null;
  /** Posterior probability (flat prior) that the treatment is better in the metric's good direction. */
  chanceToWin: number | null;
  cuped: { applied: boolean; varianceReduction: number | null; theta: number | null };
  verdict: 'better' | 'worse' | 'inconclusive' | 'too-few-units';
  /** The rule applied, in words. */
  rule: string;
}

/**
 * An arm's value and standard error: binomial and mean, the mean of the per-unit values; ratio, ΣX/ΣY with the
 * delta-method variance (var_X − 2r·cov_XY + r²·var_Y)/(n·ȳ²), r = x̄/ȳ. Null when there are no units (or no
 * denominator); se null below 2 units.
 *
 * @example
 * armValue({ units: 4, sumX: 2, sumX2: 2 }, 'binomial'); // { value: 0.5, se: 0.2887 }
 */
export function armValue(m: ArmMoments, kind: MetricKind): { value: number | null; se: number | null } {
  const n = m.units;
  if (!(n >= 1)) return { value: null, se: null };
  if (kind !== 'ratio') return { value: m.sumX / n, se: n >= 2 ? Math.sqrt(sampleVariance(m.sumX, m.sumX2, n) / n) : null };
  if (!hasDenominator(m) || m.sumY === 0) return { value: null, se: null };
  const r = m.sumX / m.sumY;
  if (n < 2) return { value: r, se: null };
  const yBar = m.sumY / n;
  const v = sampleVariance(m.sumX, m.sumX2, n) - 2 * r * sampleCovariance(m.sumX, m.sumY, m.sumXY, n) + r * r * sampleVariance(m.sumY, m.sumY2, n);
  return { value: r, se: Math.sqrt(Math.max(0, v) / (n * yBar * yBar)) };
}

/**
 * The CUPED slope pooled within arms: Σ_arms cov(X, C)·(n − 1) / Σ_arms var(C)·(n − 1), the OLS slope of X on C with
 * an intercept per arm. Null when an arm lacks the covariate or C does not vary.
 *
 * @example
 * const theta = pooledCupedTheta([control, treatmentA, treatmentB]);
 */
export function pooledCupedTheta(arms: ArmMoments[]): number | null {
  let sxc = 0;
  let scc = 0;
  for (const m of arms) {
    if (!hasCovariate(m)) return null;
    if (m.units < 1) continue;
    sxc += m.sumXC - (m.sumX * m.sumC) / m.units;
    scc += m.sumC2 - (m.sumC * m.sumC) / m.units;
  }
  return scc > 0 ? sxc / scc : null;
}

interface Side {
  n: number;
  mean: number;
  variance: number;
}

/** The per-unit mean and variance each arm enters the test with (CUPED-adjusted or not). */
function sides(control: ArmMoments, treatment: ArmMoments, options: CompareOptions): { c: Side; t: Side; cuped: ArmComparison['cuped']; cupedNote: string } {
  const raw = (m: ArmMoments): Side => {
    if (options.kind !== 'ratio') return { n: m.units, mean: m.sumX / m.units, variance: sampleVariance(m.sumX, m.sumX2, m.units) };
    const { value, se } = armValue(m, 'ratio');
    return { n: m.units, mean: value ?? Number.NaN, variance: (se ?? Number.NaN) ** 2 * m.units };
  };
  const c = raw(control);
  const t = raw(treatment);
  const off = { applied: false, varianceReduction: null, theta: null };
  if (!options.cuped) return { c, t, cuped: off, cupedNote: '' };
  if (options.kind === 'ratio') return { c, t, cuped: off, cupedNote: 'CUPED is not applied to ratio metrics. ' };
  if (!hasCovariate(control) || !hasCovariate(treatment)) return { c, t, cuped: off, cupedNote: 'CUPED not applied: no pre-period covariate. ' };
  const theta = options.theta ?? pooledCupedTheta([control, treatment]);
  if (theta === null || !Number.isFinite(theta)) return { c, t, cuped: off, cupedNote: 'CUPED not applied: the covariate does not vary. ' };
  const cBar = (control.sumC + treatment.sumC) / (control.units + treatment.units);
  const adjust = (m: ArmMoments & { sumC: number; sumC2: number; sumXC: number }, s: Side): Side => {
    const varC = sampleVariance(m.sumC, m.sumC2, m.units);
    const cov = sampleCovariance(m.sumX, m.sumC, m.sumXC, m.units);
    return { n: s.n, mean: s.mean - theta * (m.sumC / m.units - cBar), variance: Math.max(0, s.variance + theta * theta * varC - 2 * theta * cov) };
  };
  const ca = adjust(control, c);
  const ta = adjust(treatment, t);
  const before = c.variance / c.n + t.variance / t.n;
  const after = ca.variance / ca.n + ta.variance / ta.n;
  return { c: ca, t: ta, cuped: { applied: true, varianceReduction: before > 0 ? 1 - after / before : null, theta }, cupedNote: '' };
}

const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;

/**
 * Compares `treatment` with `control` on one metric.
 *
 * @example
 * compareArms({ units: 5000, sumX: 1500, sumX2: 1500 }, { units: 5000, sumX: 1650, sumX2: 1650 }, { kind: 'binomial', direction: 'increase', sequentialTuningUnits: 5000 });
 * // { relativeLift: 0.1, ci: { low: 0.04, high: 0.16 }, verdict: 'better', rule: 'better: the always-valid 95% interval …' }
 */
export function compareArms(control: ArmMoments, treatment: ArmMoments, options: CompareOptions): ArmComparison {
  const alpha = options.alpha ?? 0.05;
  const minUnits = options.minUnitsPerArm ?? MIN_UNITS_PER_ARM;
  const level = pct(1 - alpha);
  const cv = armValue(control, options.kind);
  const tv = armValue(treatment, options.kind);
  const measured = { controlValue: cv.value, treatmentValue: tv.value, controlSe: cv.se, treatmentSe: tv.se };
  const tooFew = Math.min(control.units, treatment.units) < minUnits;
  const fewRule = `too-few-units: no better / worse until both arms have ≥ ${minUnits} units (control ${control.units}, treatment ${treatment.units})`;
  const none = { difference: null, relativeLift: null, ci: null, sequentialCi: null, pValue: null, chanceToWin: null };
  if (cv.value === null || tv.value === null || cv.se === null || tv.se === null) {
    return { ...measured, ...none, cuped: { applied: false, varianceReduction: null, theta: null }, verdict: tooFew ? 'too-few-units' : 'inconclusive', rule: tooFew ? fewRule : 'inconclusive: an arm has no value (no units, or a ratio with a zero denominator)' };
  }
  const { c, t, cuped, cupedNote } = sides(control, treatment, options);
  const difference = t.mean - c.mean;
  // The test is on the relative lift when the control's value is positive (a lift of a value ≤ 0 means nothing),
  // else on the absolute difference.
  const relative = c.mean > 0;
  const estimate = relative ? difference / c.mean : difference;
  const se = relative
    ? Math.sqrt(t.variance / (c.mean ** 2 * t.n) + (c.variance * t.mean ** 2) / (c.mean ** 4 * c.n))
    : Math.sqrt(t.variance / t.n + c.variance / c.n);
  // Welch–Satterthwaite degrees of freedom of the two arms' variance components (∞ when neither varies).
  const va = t.variance / t.n;
  const vb = c.variance / c.n;
  const df = va + vb > 0 ? (va + vb) ** 2 / (va ** 2 / (t.n - 1) + vb ** 2 / (c.n - 1)) : Number.POSITIVE_INFINITY;
  const critical = Number.isFinite(df) ? studentTQuantile(1 - alpha / 2, df) : normalQuantile(1 - alpha / 2);
  // Bounds: a relative lift of a non-negative metric is ≥ −1; a rate's treatment value ≤ 1 caps its lift at 1/c − 1.
  const lowBound = relative ? -1 : options.kind === 'binomial' ? -1 : Number.NEGATIVE_INFINITY;
  const highBound = options.kind === 'binomial' ? (relative ? 1 / c.mean - 1 : 1) : Number.POSITIVE_INFINITY;
  const bounded = (half: number): Interval => ({ low: Math.max(lowBound, estimate - half), high: Math.min(highBound, estimate + half) });
  const ci = bounded(critical * se);
  const tuning = options.sequentialTuningUnits;
  const n = c.n + t.n;
  // GrowthBook tunes on the total sample of the two arms: the planned units per arm, twice.
  const sequentialCi = tuning && tuning > 0 ? bounded(confidenceSequenceHalfWidth({ sd: se * Math.sqrt(n), n, alpha, tuningN: 2 * tuning })) : null;
  const stat = se > 0 ? estimate / se : estimate === 0 ? 0 : Math.sign(estimate) * Number.POSITIVE_INFINITY;
  const pValue = 2 * (Number.isFinite(df) ? studentTCdf(-Math.abs(stat), df) : normalCdf(-Math.abs(stat)));
  const good = options.direction === 'increase' ? 1 : -1;
  const chanceToWin = normalCdf(good * stat);
  const decidingCi = sequentialCi ?? ci;
  const what = `the ${sequentialCi ? 'always-valid ' : ''}${level} interval of the ${relative ? 'relative lift' : 'difference (the control value is not > 0, so no relative lift)'}`;
  const goodSide = options.direction === 'increase' ? 'above' : 'below';
  const badSide = options.direction === 'increase' ? 'below' : 'above';
  let verdict: ArmComparison['verdict'];
  let rule: string;
  if (tooFew) {
    verdict = 'too-few-units';
    rule = fewRule;
  } else if (good > 0 ? decidingCi.low > 0 : decidingCi.high < 0) {
    verdict = 'better';
    rule = `better: ${what} lies wholly ${goodSide} 0 (${options.direction} is good) and both arms have ≥ ${minUnits} units`;
  } else if (good > 0 ? decidingCi.high < 0 : decidingCi.low > 0) {
    verdict = 'worse';
    rule = `worse: ${what} lies wholly ${badSide} 0 (${options.direction} is good) and both arms have ≥ ${minUnits} units`;
  } else {
    verdict = 'inconclusive';
    rule = `inconclusive: ${what} includes 0`;
  }
  return {
    ...measured,
    difference,
    relativeLift: relative ? estimate : null,
    ci: relative ? ci : null,
    sequentialCi: relative ? sequentialCi : null,
    pValue,
    chanceToWin,
    cuped,
    verdict,
    rule: cupedNote + rule,
  };
}
