/**
 * Scenario 1: false positives under continuous peeking. A/A (no true effect): both arms drawn from the same users
 * model; the experiment is looked at `looks` times as units arrive (equal steps up to `unitsPerArm`), and at each look
 * the analysis's comparison is read. A replication is a false positive when, at ANY look,
 * - sequential: the always-valid interval (the asymptotic confidence sequence, tuned for `unitsPerArm`) excludes 0;
 * - naive: the fixed-horizon 1 − alpha interval excludes 0 (what a team does when it watches a classic test).
 * The naive rate climbs with every look (each look is another chance for noise to cross the line: the fixed-horizon
 * interval holds at one pre-chosen n, not at every n at once); the sequential one stays at or below alpha.
 *
 * @example
 * const result = simulatePeeking({ seed: 1, kind: 'binomial', replications: 500, unitsPerArm: 2000, looks: 20 });
 * result.sequential.rate; // ≤ 0.05
 */
import { compareArms } from '../../lib/shared/statistics/compare-arms.ts';
import { ArmAccumulator } from './arm-accumulator.ts';
import { binomialRange, type CountRange } from './monte-carlo-error.ts';
import { SeededRandom } from './seeded-random.ts';
import { DEFAULT_USER_MODEL, drawPeriod, drawUser, type UserModel } from './user-model.ts';

export interface PeekingOptions {
  seed: number;
  /** binomial: success after exposure; mean: the unit's sum of values (heavy-tailed). */
  kind: 'binomial' | 'mean';
  replications: number;
  /** Units per arm at the last look (and the sequential interval's tuning). */
  unitsPerArm: number;
  looks: number;
  alpha?: number;
  model?: UserModel;
}

export interface PeekingRate {
  /** Replications with a false positive at any look. */
  hits: number;
  rate: number;
  /** Cumulative false-positive rate after look 1, 2, … (the climb). */
  byLook: number[];
}

export interface PeekingResult {
  kind: 'binomial' | 'mean';
  replications: number;
  unitsPerArm: number;
  looks: number;
  alpha: number;
  sequential: PeekingRate;
  naive: PeekingRate;
  /** Fixed-horizon test read once, at the last look only (the way it is meant to be used): ≈ alpha. */
  finalLookOnly: { hits: number; rate: number };
  /** The count of false positives chance alone explains if the true rate were alpha (exact binomial, 0.1% tails). */
  alphaRange: CountRange;
  /** Comparisons with no interval (an arm without a value): they count as "no rejection". */
  missingIntervals: number;
}

const excludesZero = (ci: { low: number; high: number } | null): boolean => ci !== null && (ci.low > 0 || ci.high < 0);

/**
 * Runs the A/A peeking scenario.
 *
 * @example
 * simulatePeeking({ seed: 7, kind: 'mean', replications: 200, unitsPerArm: 1000, looks: 10 }).naive.rate;
 */
export function simulatePeeking(options: PeekingOptions): PeekingResult {
  const { kind, replications, unitsPerArm, looks } = options;
  const alpha = options.alpha ?? 0.05;
  const model = options.model ?? DEFAULT_USER_MODEL;
  const root = new SeededRandom(options.seed);
  const firstSequential = new Array<number>(looks).fill(0);
  const firstNaive = new Array<number>(looks).fill(0);
  let finalHits = 0;
  let missingIntervals = 0;
  for (let rep = 0; rep < replications; rep++) {
    const random = root.fork(`peeking-${kind}-${rep}`);
    const arms = [new ArmAccumulator(), new ArmAccumulator()];
    let added = 0;
    let sequentialAt = -1;
    let naiveAt = -1;
    for (let look = 0; look < looks; look++) {
      const target = Math.round((unitsPerArm * (look + 1)) / looks);
      for (; added < target; added++) {
        for (const arm of arms) {
          const period = drawPeriod(random, model, drawUser(random, model));
          arm.addUnit({ x: kind === 'binomial' ? period.succeeded : period.valueSum });
        }
      }
      const c = compareArms(arms[0]!.moments(), arms[1]!.moments(), { kind, direction: 'increase', alpha, sequentialTuningUnits: unitsPerArm });
      if (c.ci === null || c.sequentialCi === null) missingIntervals++;
      if (sequentialAt < 0 && excludesZero(c.sequentialCi)) sequentialAt = look;
      if (naiveAt < 0 && excludesZero(c.ci)) naiveAt = look;
      if (look === looks - 1 && excludesZero(c.ci)) finalHits++;
    }
    if (sequentialAt >= 0) firstSequential[sequentialAt]!++;
    if (naiveAt >= 0) firstNaive[naiveAt]!++;
  }
  const cumulative = (first: number[]): PeekingRate => {
    const byLook: number[] = [];
    let total = 0;
    for (const n of first) byLook.push((total += n) / replications);
    return { hits: total, rate: total / replications, byLook };
  };
  return {
    kind,
    replications,
    unitsPerArm,
    looks,
    alpha,
    sequential: cumulative(firstSequential),
    naive: cumulative(firstNaive),
    finalLookOnly: { hits: finalHits, rate: finalHits / replications },
    alphaRange: binomialRange(replications, alpha),
    missingIntervals,
  };
}
