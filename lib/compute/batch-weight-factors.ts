/**
 * The one place where Flywheel's fair-share weights (shares of capacity: higher = more, `computeShares` in
 * `lib/config/stages.ts`) become AWS Batch `weightFactor`s, which run the other way: Batch gives a share identifier
 * capacity in inverse proportion to its weight factor (0.125 gets 8 times what 1.0 gets).
 *
 * The largest share maps to 1.0 and every other to `max / share`, rounded to Batch's four decimals, so the ratios of
 * capacity are the ratios of the configured shares.
 *
 * @example
 * batchWeightFactors({ inference: 1, training: 3, 'data-and-reward': 2, evaluation: 3, research: 1 });
 * // { inference: 3, training: 1, 'data-and-reward': 1.5, evaluation: 1, research: 3 }
 */
import { ValidationError } from '../errors.ts';
import { COMPUTE_CATEGORIES, type ComputeCategory } from '../ports/jobs.ts';

/** Batch's bounds for `weightFactor` (SchedulingPolicy ShareAttributes). */
export const BATCH_WEIGHT_FACTOR_RANGE = { min: 0.0001, max: 999.9999 } as const;

export function batchWeightFactors(shares: Record<ComputeCategory, number>): Record<ComputeCategory, number> {
  for (const category of COMPUTE_CATEGORIES) {
    const share = shares[category];
    if (!Number.isFinite(share) || share <= 0) {
      throw new ValidationError(`compute share of ${category} must be a positive number (got ${share})`, [{ path: `computeShares.${category}`, message: 'positive number' }]);
    }
  }
  const largest = Math.max(...COMPUTE_CATEGORIES.map((c) => shares[c]));
  const factors = {} as Record<ComputeCategory, number>;
  for (const category of COMPUTE_CATEGORIES) {
    const factor = Math.round((largest / shares[category]) * 10_000) / 10_000;
    if (factor > BATCH_WEIGHT_FACTOR_RANGE.max) {
      throw new ValidationError(`compute share of ${category} is too small next to the largest (${largest}): Batch weight factors stop at ${BATCH_WEIGHT_FACTOR_RANGE.max}`, [
        { path: `computeShares.${category}`, message: 'ratio to the largest share above 999.9999' },
      ]);
    }
    factors[category] = factor;
  }
  return factors;
}
