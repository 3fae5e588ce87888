/**
 * Scenario 3: variance reduction from CUPED with a predictive pre-period. The mean metric (a unit's sum of values
 * after exposure) has as covariate the same sum over the pre-period (the user's own earlier turns: correlation ρ,
 * worked out from the model in `model-truths.ts`). Theory (Deng et al. 2013): the adjusted estimator's variance is
 * (1 − ρ²) of the plain one, so the interval narrows by √(1 − ρ²), and the estimate stays unbiased.
 *
 * Each replication compares the arms twice on the same data, CUPED on (θ pooled over the arms, as the analysis does)
 * and off; it records the variance reduction the analysis reports, the ratio of the interval widths and both lift
 * estimates. Across replications the empirical variance of the CUPED lift over the plain one is a second, independent
 * check of 1 − ρ².
 *
 * @example
 * const result = simulateCuped({ seed: 1, replications: 300, unitsPerArm: 2000, trueLift: 0.03 });
 * result.varianceReduction.mean; // ≈ result.rhoSquared
 */
import { compareArms, pooledCupedTheta } from '../../lib/shared/statistics/compare-arms.ts';
import { ArmAccumulator } from './arm-accumulator.ts';
import { modelTruths } from './model-truths.ts';
import { meanWithError, sampleVarianceOf } from './monte-carlo-error.ts';
import { SeededRandom } from './seeded-random.ts';
import { drawPeriod, drawUser, type UserModel } from './user-model.ts';

/** Users with a steadier habit (more turns, less turn-to-turn noise): a pre-period that predicts (ρ ≈ 0.8). */
export const PREDICTIVE_USER_MODEL: UserModel = {
  turnsMean: 12,
  activitySpread: 0.8,
  logScale: Math.log(400),
  scaleOnActivity: -0.3,
  scaleSpread: 0.7,
  turnNoise: 0.4,
  propensity: { alpha: 0.5, beta: 4 },
};

export interface CupedOptions {
  seed: number;
  replications: number;
  unitsPerArm: number;
  /** The true relative lift of the treatment's values. */
  trueLift: number;
  model?: UserModel;
}

export interface CupedResult {
  replications: number;
  unitsPerArm: number;
  trueLift: number;
  /** Corr(pre-period sum, post-period sum) from the model, and its square: the variance CUPED can remove. */
  rho: number;
  rhoSquared: number;
  /** The reduction the analysis reports (`cuped.varianceReduction`), mean over replications ± se. */
  varianceReduction: { mean: number; se: number };
  /** CUPED interval width ÷ plain interval width, mean ± se; theory √(1 − ρ²). */
  widthRatio: { mean: number; se: number; theory: number };
  /** Var(CUPED lift) ÷ Var(plain lift) across replications; theory 1 − ρ². */
  empiricalVarianceRatio: number;
  /** Its standard error (delta method over the replications, the two estimates' covariance included). */
  empiricalVarianceRatioSe: number;
  /** Mean lift estimates ± se (both ≈ trueLift: CUPED does not bias). */
  cupedLift: { mean: number; se: number };
  plainLift: { mean: number; se: number };
}

/**
 * Runs the CUPED scenario.
 *
 * @example
 * simulateCuped({ seed: 2, replications: 200, unitsPerArm: 1000, trueLift: 0 }).widthRatio.mean;
 */
export function simulateCuped(options: CupedOptions): CupedResult {
  const model = options.model ?? PREDICTIVE_USER_MODEL;
  const truth = modelTruths(model);
  const root = new SeededRandom(options.seed);
  const reductions: number[] = [];
  const widthRatios: number[] = [];
  const cupedLifts: number[] = [];
  const plainLifts: number[] = [];
  for (let rep = 0; rep < options.replications; rep++) {
    const random = root.fork(`cuped-${rep}`);
    const arms = [new ArmAccumulator(), new ArmAccumulator()];
    for (let i = 0; i < options.unitsPerArm; i++) {
      arms.forEach((arm, a) => {
        const user = drawUser(random, model);
        const pre = drawPeriod(random, model, user, {}, { exposed: false });
        const post = drawPeriod(random, model, user, { valueLift: a === 1 ? options.trueLift : 0 });
        arm.addUnit({ x: post.valueSum, c: pre.valueSum });
      });
    }
    const [control, treatment] = arms.map((arm) => arm.moments({ cuped: true })) as [ReturnType<ArmAccumulator['moments']>, ReturnType<ArmAccumulator['moments']>];
    const theta = pooledCupedTheta([control, treatment]) ?? undefined;
    const adjusted = compareArms(control, treatment, { kind: 'mean', direction: 'increase', cuped: true, ...(theta === undefined ? {} : { theta }) });
    const plain = compareArms(control, treatment, { kind: 'mean', direction: 'increase' });
    if (!adjusted.ci || !plain.ci || adjusted.relativeLift === null || plain.relativeLift === null) continue;
    reductions.push(adjusted.cuped.varianceReduction ?? 0);
    widthRatios.push((adjusted.ci.high - adjusted.ci.low) / (plain.ci.high - plain.ci.low));
    cupedLifts.push(adjusted.relativeLift);
    plainLifts.push(plain.relativeLift);
  }
  const vc = sampleVarianceOf(cupedLifts);
  const vp = sampleVarianceOf(plainLifts);
  const ratio = vc / vp;
  const wr = meanWithError(widthRatios);
  const vr = meanWithError(reductions);
  const cl = meanWithError(cupedLifts);
  const pl = meanWithError(plainLifts);
  return {
    replications: cupedLifts.length,
    unitsPerArm: options.unitsPerArm,
    trueLift: options.trueLift,
    rho: truth.prePostCorrelation,
    rhoSquared: truth.prePostCorrelation ** 2,
    varianceReduction: { mean: vr.mean, se: vr.se },
    widthRatio: { mean: wr.mean, se: wr.se, theory: Math.sqrt(1 - truth.prePostCorrelation ** 2) },
    empiricalVarianceRatio: ratio,
    empiricalVarianceRatioSe: varianceRatioSe(cupedLifts, plainLifts, ratio),
    cupedLift: { mean: cl.mean, se: cl.se },
    plainLift: { mean: pl.mean, se: pl.se },
  };
}

/**
 * Standard error of Var(a)/Var(b) over paired replications, by the delta method on the second moments of the centred
 * pairs: the two estimates of one replication share their data, so their squared deviations are correlated.
 */
function varianceRatioSe(a: readonly number[], b: readonly number[], ratio: number): number {
  const n = a.length;
  const ma = a.reduce((s, v) => s + v, 0) / n;
  const mb = b.reduce((s, v) => s + v, 0) / n;
  const ua = a.map((v) => (v - ma) ** 2);
  const ub = b.map((v) => (v - mb) ** 2);
  const va = ua.reduce((s, v) => s + v, 0) / n;
  const vb = ub.reduce((s, v) => s + v, 0) / n;
  let saa = 0;
  let sbb = 0;
  let sab = 0;
  for (let i = 0; i < n; i++) {
    saa += (ua[i]! - va) ** 2;
    sbb += (ub[i]! - vb) ** 2;
    sab += (ua[i]! - va) * (ub[i]! - vb);
  }
  // Var(va/vb) ≈ (Var(va) − 2r·Cov(va, vb) + r²·Var(vb)) / vb², each term over n.
  const varOfRatio = (saa / n - 2 * ratio * (sab / n) + ratio * ratio * (sbb / n)) / (n * vb * vb);
  return Math.sqrt(Math.max(0, varOfRatio));
}
