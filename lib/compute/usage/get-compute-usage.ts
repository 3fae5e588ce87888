/**
 * Compute usage between two UTC days (both included), per category, and by run or by day: GPU-hours, CPU-hours, USD
 * and the number of jobs; with every budget's spend in its current period. Ended jobs count from their stored daily
 * slices, running jobs up to now.
 *
 * @example
 * const usage = await getComputeUsage(ports, { from: '2026-12-01', to: '2026-12-31', groupBy: 'run' });
 * // { rows: [{ category: 'training', runId: 'run-7', gpuHours: 12, cpuHours: 96, costUsd: 11.73, jobs: 3 }], budgets: [...] }
 */
import { ValidationError } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import { listComputeBudgets } from '../budgets/list-compute-budgets.ts';
import { USAGE_MAX_DAYS, type ComputeUsageAnswer, type UsageGroup, type UsageRow, type UsageSlice } from '../schemas.ts';
import { daysBetween, readDaySlices } from './read-usage-slices.ts';
import { dayOf } from './usage-slices.ts';

export interface ComputeUsageQuery {
  /** First day (`YYYY-MM-DD`); default the first day of `to`'s month. */
  from?: string;
  /** Last day; default today (UTC). */
  to?: string;
  groupBy?: UsageGroup;
}

export async function getComputeUsage(ports: Pick<Ports, 'records' | 'now'>, query: ComputeUsageQuery = {}): Promise<ComputeUsageAnswer> {
  const now = ports.now().getTime();
  const to = query.to ?? dayOf(now);
  const from = query.from ?? `${to.slice(0, 7)}-01`;
  const groupBy = query.groupBy ?? 'category';
  if (from > to) throw new ValidationError(`Invalid query: from: ${from} is after to (${to})`, [{ path: 'from', message: `after to (${to})` }]);
  if (daysBetween(from, to).length > USAGE_MAX_DAYS) {
    throw new ValidationError(`Invalid query: from: spans more than ${USAGE_MAX_DAYS} days to ${to}`, [{ path: 'from', message: `at most ${USAGE_MAX_DAYS} days before to` }]);
  }
  const [slices, budgets] = await Promise.all([readDaySlices(ports.records, from, to, now), listComputeBudgets(ports)]);
  return { from, to, groupBy, rows: groupSlices(slices, groupBy), budgets };
}

/** Slices summed per category and the group's other key (run or day), ordered by category then that key. */
export function groupSlices(slices: UsageSlice[], groupBy: UsageGroup): UsageRow[] {
  const groups = new Map<string, { row: UsageRow; jobs: Set<string> }>();
  for (const s of slices) {
    const extra = groupBy === 'run' ? { ...(s.runId ? { runId: s.runId } : {}) } : groupBy === 'day' ? { day: s.day } : {};
    const id = JSON.stringify([s.category, extra]);
    let group = groups.get(id);
    if (!group) groups.set(id, (group = { row: { category: s.category, ...extra, gpuHours: 0, cpuHours: 0, costUsd: 0, jobs: 0 }, jobs: new Set() }));
    group.row.gpuHours += s.gpuHours;
    group.row.cpuHours += s.cpuHours;
    group.row.costUsd += s.costUsd;
    group.jobs.add(s.jobId);
  }
  const rows = [...groups.values()].map(({ row, jobs }) => ({ ...row, jobs: jobs.size }));
  const second = (r: UsageRow) => r.day ?? r.runId ?? '';
  return rows.sort((a, b) => a.category.localeCompare(b.category) || second(a).localeCompare(second(b)));
}
