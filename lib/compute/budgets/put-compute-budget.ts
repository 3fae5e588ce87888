/**
 * Sets a compute budget: USD per calendar month (UTC) for a category, or over its whole life for a run. Setting it
 * again replaces the limit; a crossing already told stays told (each threshold is told once per period).
 *
 * @example
 * await putComputeBudget(ports, { category: 'training', limitUsd: 500 }, 'key:k1');
 * await putComputeBudget(ports, { runId: 'run-7', limitUsd: 40 }, 'key:k1');
 */
import { ValidationError } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { budgetRecord } from '../record-codecs.ts';
import { PutComputeBudgetInput, type ComputeBudget } from '../schemas.ts';

export async function putComputeBudget(ports: Pick<Ports, 'records' | 'now'>, body: unknown, by: string): Promise<ComputeBudget> {
  const input = parseInput(PutComputeBudgetInput, body, 'budget');
  if ((input.category === undefined) === (input.runId === undefined)) {
    const message = 'name exactly one of category or runId';
    throw new ValidationError(`Invalid budget: category: ${message}`, [
      { path: 'category', message },
      { path: 'runId', message },
    ]);
  }
  const budget: ComputeBudget = input.category
    ? { scope: 'category', key: input.category, limitUsd: input.limitUsd, period: 'month', updatedAt: ports.now().toISOString(), updatedBy: by }
    : { scope: 'run', key: input.runId!, limitUsd: input.limitUsd, period: 'lifetime', updatedAt: ports.now().toISOString(), updatedBy: by };
  await ports.records.put(budgetRecord.encode(budget));
  return budget;
}
