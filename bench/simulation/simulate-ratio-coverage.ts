/**
 * Ratio metrics with correlated turns: does the 95% interval cover the truth 95% of the time? The metric is value per
 * turn (latency per turn): per arm ΣX/ΣY over units, X the unit's summed values and Y its turns. Turns of one user
 * share the user's scale, and heavy users (many turns) have cheaper turns, so turns are neither independent nor
 * exchangeable across users.
 *
 * Per replication, with the true per-turn value r = E[X]/E[K] from the model and a true relative lift of the
 * treatment:
 * - unit (delta method, the analysis): the control's r̂ ± z·se from `armValue(…, 'ratio')`, and the relative lift's
 *   interval from `compareArms(…, { kind: 'ratio' })`;
 * - naive (every turn an independent observation): r̂ ± z·sd_turn/√turns, and the lift's interval from those.
 * The unit intervals cover ≈ 95%; the naive ones, too narrow by the design effect of the clustering, undercover.
 *
 * @example
 * const result = simulateRatioCoverage({ seed: 1, replications: 500, unitsPerArm: 2000, trueLift: 0.1 });
 * result.unit.arm.rate; // ≈ 0.95
 */
import { armValue, compareArms } from '../../lib/shared/statistics/compare-arms.ts';
import { Z95 } from '../../lib/shared/statistics/normal.ts';
import { ArmAccumulator } from './arm-accumulator.ts';
import { modelTruths } from './model-truths.ts';
import { binomialRange, type CountRange } from './monte-carlo-error.ts';
import { SeededRandom } from './seeded-random.ts';
import { DEFAULT_USER_MODEL, drawPeriod, drawUser, type UserModel } from './user-model.ts';

export interface RatioCoverageOptions {
  seed: number;
  replications: number;
  unitsPerArm: number;
  /** True relative lift of every treated turn's value. */
  trueLift: number;
  model?: UserModel;
}

export interface Coverage {
  hits: number;
  rate: number;
}

export interface RatioCoverageResult {
  replications: number;
  unitsPerArm: number;
  trueLift: number;
  /** The true value per turn. */
  truePerTurn: number;
  nominal: number;
  /** Counts chance explains around the nominal 95% (exact binomial, 0.1% tails). */
  nominalRange: CountRange;
  unit: { arm: Coverage; lift: Coverage };
  naive: { arm: Coverage; lift: Coverage };
  /** Mean ratio of the naive standard error to the delta-method one (its square is the design effect's inverse). */
  naiveSeRatio: number;
}

/** The naive per-turn mean and its standard error: every turn treated as independent. */
function perTurn(arm: ArmAccumulator): { mean: number; se: number } {
  const mean = arm.sumX / arm.sumY;
  const variance = (arm.sumTurnSquares - arm.sumY * mean * mean) / (arm.sumY - 1);
  return { mean, se: Math.sqrt(Math.max(0, variance) / arm.sumY) };
}

/**
 * Runs the ratio coverage scenario.
 *
 * @example
 * simulateRatioCoverage({ seed: 5, replications: 300, unitsPerArm: 1000, trueLift: 0 }).naive.arm.rate; // < 0.95
 */
export function simulateRatioCoverage(options: RatioCoverageOptions): RatioCoverageResult {
  const model = options.model ?? DEFAULT_USER_MODEL;
  const truth = modelTruths(model);
  const r = truth.ratioPerTurn;
  const lift = options.trueLift;
  const root = new SeededRandom(options.seed);
  const counts = { unitArm: 0, unitLift: 0, naiveArm: 0, naiveLift: 0 };
  let seRatioSum = 0;
  const covers = (estimate: number, se: number, target: number) => Math.abs(estimate - target) <= Z95 * se;
  for (let rep = 0; rep < options.replications; rep++) {
    const random = root.fork(`ratio-${rep}`);
    const arms = [new ArmAccumulator(), new ArmAccumulator()];
    for (let i = 0; i < options.unitsPerArm; i++) {
      arms.forEach((arm, a) => {
        const period = drawPeriod(random, model, drawUser(random, model), { valueLift: a === 1 ? lift : 0 });
        arm.addUnit({ x: period.valueSum, y: period.turns, turnSquares: period.valueSquares });
      });
    }
    const [control, treatment] = arms as [ArmAccumulator, ArmAccumulator];
    const unitArm = armValue(control.moments({ ratio: true }), 'ratio');
    if (unitArm.value !== null && unitArm.se !== null && covers(unitArm.value, unitArm.se, r)) counts.unitArm++;
    const c = compareArms(control.moments({ ratio: true }), treatment.moments({ ratio: true }), { kind: 'ratio', direction: 'decrease' });
    if (c.ci && c.ci.low <= lift && lift <= c.ci.high) counts.unitLift++;

    const nc = perTurn(control);
    const nt = perTurn(treatment);
    if (covers(nc.mean, nc.se, r)) counts.naiveArm++;
    // The naive lift's standard error, by the same delta method over per-turn standard errors.
    const naiveLift = nt.mean / nc.mean - 1;
    const naiveLiftSe = Math.sqrt(nt.se ** 2 / nc.mean ** 2 + (nt.mean ** 2 * nc.se ** 2) / nc.mean ** 4);
    if (covers(naiveLift, naiveLiftSe, lift)) counts.naiveLift++;
    if (unitArm.se) seRatioSum += nc.se / unitArm.se;
  }
  const R = options.replications;
  const rate = (hits: number): Coverage => ({ hits, rate: hits / R });
  return {
    replications: R,
    unitsPerArm: options.unitsPerArm,
    trueLift: lift,
    truePerTurn: r,
    nominal: 0.95,
    nominalRange: binomialRange(R, 0.95),
    unit: { arm: rate(counts.unitArm), lift: rate(counts.unitLift) },
    naive: { arm: rate(counts.naiveArm), lift: rate(counts.naiveLift) },
    naiveSeRatio: seRatioSum / R,
  };
}
