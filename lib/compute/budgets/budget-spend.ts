/**
 * What a budget has spent in a period: a category's budget over a calendar month (UTC, `YYYY-MM`), a run's over its
 * whole life (`lifetime`). Running jobs count up to now.
 *
 * @example
 * const spent = await budgetSpend(records, budget, '2026-12', Date.now());
 */
import type { RecordsPort } from '../../ports/records.ts';
import type { ComputeBudget } from '../schemas.ts';
import { readDaySlices, readRunSlices } from '../usage/read-usage-slices.ts';

/** The period of a budget that contains `at`: `YYYY-MM` for a category, `lifetime` for a run. */
export function budgetPeriod(scope: ComputeBudget['scope'], at: number): string {
  return scope === 'category' ? new Date(at).toISOString().slice(0, 7) : 'lifetime';
}

/** The first and last day of a `YYYY-MM` month. */
export function monthDays(month: string): { from: string; to: string } {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const last = new Date(Date.UTC(y, m, 0)).getUTCDate();
  return { from: `${month}-01`, to: `${month}-${String(last).padStart(2, '0')}` };
}

/** USD spent by `budget`'s category or run in `period`. */
export async function budgetSpend(records: RecordsPort, budget: Pick<ComputeBudget, 'scope' | 'key'>, period: string, now: number): Promise<number> {
  if (budget.scope === 'run') return (await readRunSlices(records, budget.key, now)).reduce((a, s) => a + s.costUsd, 0);
  const { from, to } = monthDays(period);
  return (await readDaySlices(records, from, to, now, budget.key)).reduce((a, s) => a + s.costUsd, 0);
}
