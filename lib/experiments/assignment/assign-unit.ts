/**
 * Which arm a unit gets in an experiment: pure and deterministic (no clock, no store), so the serving layer, the
 * analysis and a team's notebook all agree, and answered in microseconds from a record held in memory.
 *
 * Three independent GrowthBook v2 hashes of the unit (`growthbook-hash.ts`), one per question, so that answering one
 * never moves the answer to another:
 * 1. holdout: `hash(seed + '/holdout', unit) < holdout` → the control, reason `holdout`, no exposure logged;
 * 2. ramp: `hash(seed + '/ramp', unit) < percent / 100` of the step in force → in; else the control, reason
 *    `not-ramped`, no exposure. Widening the ramp raises the threshold, so it only adds units: a unit in stays in;
 * 3. arm: `hash(seed, unit)` falls in one arm's range of [0, 1), ranges cut in definition order by weight over ALL
 *    arms. A stopped arm keeps its range (its units get the control, reason `arm-stopped`, no exposure), so every
 *    other unit keeps its arm: ranges are never renormalised, and assignment is sticky across ramps and stops.
 *
 * An experiment that is not running (draft, stopped, decided) serves the control to everyone (`not-ramped`, no
 * exposure). The seed is `definition.seed`, else the experiment id.
 *
 * @example
 * const a = assignUnit(experiment, 'user-42'); // { arm: 'treatment', checkpoint: 'ckpt-7', reason: 'assigned', logExposure: true, … }
 */
import type { Arm, Assignment, ExperimentRecord } from '../schemas.ts';
import { growthBookHash } from './growthbook-hash.ts';

/** The suffixes that make the holdout and ramp hashes independent of the arm hash (`<seed>/holdout`). */
export const HASH_SEEDS = { holdout: '/holdout', ramp: '/ramp' } as const;

/** The seed every hash of this experiment starts from. */
export function seedOf(experiment: ExperimentRecord): string {
  return experiment.definition.seed ?? experiment.definition.id;
}

/**
 * The arm whose range holds `n` (in [0, 1)): ranges cut by weight over all arms, in definition order.
 *
 * @example
 * armAt(arms, 0.73); // with weights 1, 1: the second arm
 */
export function armAt(arms: readonly Arm[], n: number): Arm {
  let total = 0;
  for (const a of arms) total += a.weight;
  let upper = 0;
  for (const a of arms) {
    upper += a.weight / total;
    if (n < upper) return a;
  }
  // Rounding can leave the last upper bound a hair under 1.
  return arms[arms.length - 1]!;
}

/**
 * The unit's assignment in this experiment; see the file comment.
 *
 * @example
 * assignUnit(experiment, 'user-42').reason; // 'assigned' | 'holdout' | 'not-ramped' | 'arm-stopped'
 */
export function assignUnit(experiment: ExperimentRecord, unitId: string): Assignment {
  const { definition } = experiment;
  const control = definition.arms.find((a) => a.control) ?? definition.arms[0]!;
  const seed = seedOf(experiment);
  const answer = (arm: Arm, reason: Assignment['reason']): Assignment => ({
    experiment: definition.id,
    unitId,
    arm: arm.id,
    checkpoint: arm.checkpoint,
    config: arm.config,
    reason,
    logExposure: reason === 'assigned',
  });
  if (experiment.status !== 'running') return answer(control, 'not-ramped');
  if (definition.holdout > 0 && growthBookHash(seed + HASH_SEEDS.holdout, unitId) < definition.holdout) return answer(control, 'holdout');
  const step = definition.ramp[Math.min(experiment.rampStep, definition.ramp.length - 1)]!;
  if (step.percent < 100 && growthBookHash(seed + HASH_SEEDS.ramp, unitId) >= step.percent / 100) return answer(control, 'not-ramped');
  const arm = armAt(definition.arms, growthBookHash(seed, unitId));
  if (!arm.control && experiment.stoppedArms.some((s) => s.arm === arm.id)) return answer(control, 'arm-stopped');
  return answer(arm, 'assigned');
}
