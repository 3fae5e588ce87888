/**
 * Answers an `AssignmentRequest`: every requested unit in every running experiment of its unit type (or only the
 * experiments named), from the in-memory `AssignmentCache`. An experiment named but not running is left out (the
 * serving layer serves its default); nothing is read from the records unless the cache is stale.
 *
 * @example
 * const { assignments } = await assignUnits(cache, { unitType: 'user', unitIds: ['u1', 'u2'] });
 */
import { parseInput } from '../../shared/parse-input.ts';
import { AssignmentRequest, type Assignment } from '../schemas.ts';
import type { AssignmentCache } from './assignment-cache.ts';
import { assignUnit } from './assign-unit.ts';

/**
 * Validates the request (every field named) and assigns each unit.
 *
 * @example
 * await assignUnits(cache, { unitIds: ['u1'], experiments: ['exp-1'] }); // { assignments: [{ experiment: 'exp-1', unitId: 'u1', … }] }
 */
export async function assignUnits(cache: AssignmentCache, input: unknown): Promise<{ assignments: Assignment[] }> {
  const request = parseInput(AssignmentRequest, input, 'assignment request');
  const named = request.experiments ? new Set(request.experiments) : undefined;
  const running = await cache.running(request.experiments ?? []);
  const assignments: Assignment[] = [];
  for (const experiment of running) {
    if (experiment.definition.unitType !== request.unitType) continue;
    if (named && !named.has(experiment.definition.id)) continue;
    for (const unitId of request.unitIds) assignments.push(assignUnit(experiment, unitId));
  }
  return { assignments };
}
