/**
 * The budgets with what each has spent in its current period (this month for a category, the whole life for a run),
 * and whether the spend reached the limit.
 *
 * @example
 * const budgets = await listComputeBudgets(ports); // [{ scope: 'category', key: 'training', limitUsd: 500, spentUsd: 12.4, crossed: false, period: '2026-12' }]
 */
import type { Ports } from '../../ports/ports.ts';
import { budgetRecord } from '../record-codecs.ts';
import { computeKeys } from '../record-keys.ts';
import type { BudgetStatus, ComputeBudget } from '../schemas.ts';
import { queryAll } from '../usage/read-usage-slices.ts';
import { budgetPeriod, budgetSpend } from './budget-spend.ts';

/** Every budget, by scope then key. */
export async function readBudgets(records: Ports['records']): Promise<ComputeBudget[]> {
  return (await queryAll(records, { index: 'gsi1', partition: computeKeys.allBudgets })).map((item) => budgetRecord.decode(item));
}

export async function listComputeBudgets(ports: Pick<Ports, 'records' | 'now'>): Promise<BudgetStatus[]> {
  const now = ports.now().getTime();
  const budgets = await readBudgets(ports.records);
  return Promise.all(
    budgets.map(async (b) => {
      const period = budgetPeriod(b.scope, now);
      const spentUsd = await budgetSpend(ports.records, b, period, now);
      return { scope: b.scope, key: b.key, limitUsd: b.limitUsd, spentUsd, crossed: spentUsd >= b.limitUsd, period };
    }),
  );
}
