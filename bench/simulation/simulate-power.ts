/**
 * Scenario 2: power at the planned sample. The true effect is the minimum detectable effect: the success share
 * (the binomial metric, "the user succeeded at least once after exposure") moves from q̄ to q̄·(1 + mde), q̄ worked out
 * from the user model (`model-truths.ts`). The planned sample is `unitsPerArm` for that design at alpha and power 0.8;
 * each replication draws that many units per arm and runs the fixed-horizon test of the analysis (`compareArms`):
 * detected when p < alpha with the difference on the true side. Observed power ≈ the design's power (`powerAt` at the
 * planned n, ≥ 0.8 by the rounding up). The always-valid interval's power at the same n is reported too: the price of
 * being allowed to peek.
 *
 * @example
 * const result = simulatePower({ seed: 1, replications: 400, mde: 0.1 });
 * result.observed.rate; // ≈ result.nominal
 */
import { compareArms } from '../../lib/shared/statistics/compare-arms.ts';
import { powerAt, unitsPerArm } from '../../lib/shared/statistics/power.ts';
import { ArmAccumulator } from './arm-accumulator.ts';
import { modelTruths } from './model-truths.ts';
import { binomialRange, type CountRange } from './monte-carlo-error.ts';
import { SeededRandom } from './seeded-random.ts';
import { DEFAULT_USER_MODEL, drawPeriod, drawUser, type UserModel } from './user-model.ts';

export interface PowerOptions {
  seed: number;
  replications: number;
  /** Relative minimum detectable effect, also the true effect. */
  mde: number;
  alpha?: number;
  power?: number;
  model?: UserModel;
}

export interface PowerResult {
  metric: 'binomial';
  mde: number;
  alpha: number;
  baselineMean: number;
  /** The planned sample: `unitsPerArm` of the design. */
  unitsPerArm: number;
  /** `powerAt` the planned sample (≥ the target power by rounding up). */
  nominal: number;
  replications: number;
  observed: { hits: number; rate: number };
  /** Where chance alone puts the observed count if the true power were `nominal` (exact binomial, 0.1% tails). */
  nominalRange: CountRange;
  /** Detection by the always-valid interval at the same n (it is wider: lower power at the planned sample). */
  sequential: { hits: number; rate: number };
  /** Mean estimated relative lift over replications (≈ mde: the estimate is unbiased). */
  meanLift: number;
}

/**
 * Runs the power scenario.
 *
 * @example
 * simulatePower({ seed: 3, replications: 300, mde: 0.1 }).unitsPerArm;
 */
export function simulatePower(options: PowerOptions): PowerResult {
  const alpha = options.alpha ?? 0.05;
  const model = options.model ?? DEFAULT_USER_MODEL;
  const truth = modelTruths(model);
  const q = truth.successShare;
  const design = { kind: 'binomial' as const, mde: options.mde, alpha, baselineMean: q };
  const n = unitsPerArm({ ...design, power: options.power ?? 0.8 });
  const nominal = powerAt({ ...design, unitsPerArm: n });
  // A user who would not succeed does with probability `rescue`: q → q + rescue(1 − q) = q(1 + mde).
  const rescue = (options.mde * q) / (1 - q);
  const root = new SeededRandom(options.seed);
  let hits = 0;
  let sequentialHits = 0;
  let liftSum = 0;
  for (let rep = 0; rep < options.replications; rep++) {
    const random = root.fork(`power-${rep}`);
    const control = new ArmAccumulator();
    const treatment = new ArmAccumulator();
    for (let i = 0; i < n; i++) {
      control.addUnit({ x: drawPeriod(random, model, drawUser(random, model)).succeeded });
      treatment.addUnit({ x: drawPeriod(random, model, drawUser(random, model), { rescue }).succeeded });
    }
    const c = compareArms(control.moments(), treatment.moments(), { kind: 'binomial', direction: 'increase', alpha, sequentialTuningUnits: n });
    if (c.pValue !== null && c.pValue < alpha && (c.difference ?? 0) > 0) hits++;
    if (c.sequentialCi && c.sequentialCi.low > 0) sequentialHits++;
    liftSum += c.relativeLift ?? 0;
  }
  const R = options.replications;
  return {
    metric: 'binomial',
    mde: options.mde,
    alpha,
    baselineMean: q,
    unitsPerArm: n,
    nominal,
    replications: R,
    observed: { hits, rate: hits / R },
    nominalRange: binomialRange(R, nominal),
    sequential: { hits: sequentialHits, rate: sequentialHits / R },
    meanLift: liftSum / R,
  };
}
