/**
 * Sample size and power of a two-sided two-sample z-test for a relative minimum detectable effect, equal arms: the
 * equation statsmodels' `NormalIndPower` solves, power(n) = Φ(d·√(n/2) − z) + Φ(−d·√(n/2) − z), with z = Φ⁻¹(1 − α/2)
 * and d = Δ / σ̄, Δ = |mde × baseline|, σ̄² the mean of the two arms' per-unit variances. A binomial metric's variance
 * comes from its mean (p(1 − p) in control, p'(1 − p') under the effect); a mean or ratio metric needs `baselineSd`
 * (a ratio's: its per-unit delta-method standard deviation), the same in both arms.
 */
import { ValidationError } from '../../errors.ts';
import { normalCdf, normalQuantile } from './normal.ts';

export interface PowerInput {
  kind: 'binomial' | 'mean' | 'ratio';
  /** Relative minimum detectable effect (0.02 = 2% of the baseline). */
  mde: number;
  alpha?: number;
  baselineMean: number;
  baselineSd?: number;
}

/** Δ and σ̄² of the design; ValidationError naming the `power.*` field that makes it impossible. */
function design(input: PowerInput): { delta: number; variance: number } {
  const { kind, mde, baselineMean, baselineSd } = input;
  const alpha = input.alpha ?? 0.05;
  if (!(alpha > 0 && alpha < 1)) throw new ValidationError('alpha must be in (0, 1)', [{ path: 'power.alpha', message: 'must be in (0, 1)' }]);
  if (!(mde > 0) || !Number.isFinite(mde)) throw new ValidationError('mde must be a positive number', [{ path: 'power.mde', message: 'must be a positive number' }]);
  const delta = Math.abs(mde * baselineMean);
  if (!(delta > 0) || !Number.isFinite(delta)) throw new ValidationError('the baseline mean is 0: a relative effect of it is 0', [{ path: 'power.baselineMean', message: 'must be non-zero' }]);
  if (kind === 'binomial') {
    if (!(baselineMean > 0 && baselineMean < 1)) throw new ValidationError('a binomial baseline is a rate in (0, 1)', [{ path: 'power.baselineMean', message: 'must be in (0, 1) for a binomial metric' }]);
    const treated = baselineMean * (1 + mde);
    if (!(treated < 1)) throw new ValidationError(`a ${mde} relative effect on ${baselineMean} is a rate ≥ 1`, [{ path: 'power.mde', message: 'the treated rate baselineMean × (1 + mde) must stay below 1' }]);
    return { delta, variance: (baselineMean * (1 - baselineMean) + treated * (1 - treated)) / 2 };
  }
  if (baselineSd === undefined || !(baselineSd > 0)) throw new ValidationError(`a ${kind} metric needs baselineSd`, [{ path: 'power.baselineSd', message: `required (positive) for a ${kind} metric` }]);
  return { delta, variance: baselineSd * baselineSd };
}

function powerOf(nPerArm: number, delta: number, variance: number, z: number): number {
  const shift = delta / Math.sqrt((2 * variance) / nPerArm);
  return normalCdf(shift - z) + normalCdf(-shift - z);
}

/**
 * Power of the design at `unitsPerArm` units in each arm.
 *
 * @example
 * powerAt({ unitsPerArm: 3_000, kind: 'binomial', mde: 0.1, baselineMean: 0.3 }); // ≈ 0.706
 */
export function powerAt(input: PowerInput & { unitsPerArm: number }): number {
  const { delta, variance } = design(input);
  if (!(input.unitsPerArm > 0)) return 0;
  return powerOf(input.unitsPerArm, delta, variance, normalQuantile(1 - (input.alpha ?? 0.05) / 2));
}

/**
 * Units per arm for the design to reach `power` (default 0.8) at `alpha` (default 0.05), rounded up.
 *
 * @example
 * unitsPerArm({ kind: 'binomial', mde: 0.1, baselineMean: 0.3 }); // 3_760
 */
export function unitsPerArm(input: PowerInput & { power?: number }): number {
  const { delta, variance } = design(input);
  const power = input.power ?? 0.8;
  const alpha = input.alpha ?? 0.05;
  if (!(power > alpha / 2 && power < 1)) throw new ValidationError('power must be in (alpha/2, 1)', [{ path: 'power.power', message: 'must be between alpha/2 and 1' }]);
  const z = normalQuantile(1 - alpha / 2);
  // The one-tail solution is an upper bound (the other tail only adds power); bisect below it.
  let high = Math.max(1, (2 * variance * (z + normalQuantile(power)) ** 2) / (delta * delta));
  let low = 0;
  for (let i = 0; i < 200 && high - low > 1e-9 * high; i++) {
    const mid = (low + high) / 2;
    if (powerOf(mid, delta, variance, z) >= power) high = mid;
    else low = mid;
  }
  return Math.max(2, Math.ceil(high - 1e-9 * high));
}
