/**
 * After a job's usage is recorded: the budgets of its category (for the months it ran in) and of its run are checked,
 * and each threshold crossed for the first time in a period is told once: 80% as a `warning`, 100% as an `alert`
 * (kind `budget`, dedupKey `budget:<scope>:<key>:<period>:<threshold>`). A marker record per budget, period and
 * threshold keeps a crossing told once even after its notice is resolved; raiseNotice's dedup key keeps two
 * consumers racing from telling it twice.
 *
 * @example
 * await checkComputeBudgets(ports, { category: 'training', runId: 'run-7', days: ['2026-12-03'] });
 */
import type { Ports } from '../../ports/ports.ts';
import { raiseNotice, type NoticeDeliveryOptions } from '../../people/notices/raise-notice.ts';
import { budgetRecord, crossingRecord } from '../record-codecs.ts';
import { computeKeys } from '../record-keys.ts';
import type { ComputeCategory } from '../../ports/jobs.ts';
import type { ComputeBudget } from '../schemas.ts';
import { budgetSpend } from './budget-spend.ts';

/** Fractions of a budget whose crossing is told, with the severity it is told at. */
export const BUDGET_THRESHOLDS = [
  { threshold: 80, fraction: 0.8, severity: 'warning' },
  { threshold: 100, fraction: 1, severity: 'alert' },
] as const;

export interface BudgetCrossing {
  scope: ComputeBudget['scope'];
  key: string;
  period: string;
  threshold: number;
  spentUsd: number;
  noticeId: string;
}

const usd = (n: number) => `$${n.toFixed(2)}`;

export async function checkComputeBudgets(
  ports: Pick<Ports, 'records' | 'now'> & Partial<Pick<Ports, 'events'>>,
  job: { category: ComputeCategory; runId?: string; days: string[] },
  options?: NoticeDeliveryOptions,
): Promise<BudgetCrossing[]> {
  const now = ports.now().getTime();
  const checks: Array<{ budget: ComputeBudget; period: string }> = [];
  const categoryBudget = budgetRecord.decodeIfPresent(await ports.records.get(computeKeys.budget('category', job.category).pk, 'BUDGET'));
  if (categoryBudget) for (const month of new Set(job.days.map((d) => d.slice(0, 7)))) checks.push({ budget: categoryBudget, period: month });
  if (job.runId) {
    const runBudget = budgetRecord.decodeIfPresent(await ports.records.get(computeKeys.budget('run', job.runId).pk, 'BUDGET'));
    if (runBudget) checks.push({ budget: runBudget, period: 'lifetime' });
  }
  const crossings: BudgetCrossing[] = [];
  for (const { budget, period } of checks) {
    const spentUsd = await budgetSpend(ports.records, budget, period, now);
    for (const t of BUDGET_THRESHOLDS) {
      if (spentUsd < budget.limitUsd * t.fraction) continue;
      const marker = computeKeys.crossing(budget.scope, budget.key, period, t.threshold);
      if (await ports.records.get(marker.pk, marker.sk)) continue;
      const what = budget.scope === 'category' ? `Compute category ${budget.key}` : `Run ${budget.key}`;
      const during = budget.scope === 'category' ? ` in ${period}` : '';
      const { notice } = await raiseNotice(
        ports,
        {
          dedupKey: `budget:${budget.scope}:${budget.key}:${period}:${t.threshold}`,
          kind: 'budget',
          severity: t.severity,
          title: `${what} crossed ${t.threshold}% of its ${usd(budget.limitUsd)} budget${during}: ${usd(spentUsd)} spent`,
          text: `${what} has spent ${usd(spentUsd)} of compute${during} (GPU and CPU hours at the cost model's prices), ${Math.round((spentUsd / budget.limitUsd) * 100)}% of its budget of ${usd(budget.limitUsd)}. See \`flywheel compute usage --by ${budget.scope === 'category' ? 'category' : 'run'}\`; raise it with \`flywheel compute budget set --${budget.scope === 'category' ? 'category' : 'run'} ${budget.key} --usd N\`.`,
          source: { capability: 'compute', ...(budget.scope === 'run' ? { runKind: 'run', runId: budget.key } : {}) },
          link: '/compute',
          fields: { scope: budget.scope, key: budget.key, period, limitUsd: budget.limitUsd, spentUsd: Math.round(spentUsd * 100) / 100, threshold: t.threshold },
        },
        options,
      );
      await ports.records.put(crossingRecord.encode({ scope: budget.scope, key: budget.key, period, threshold: t.threshold, spentUsd, noticeId: notice.noticeId, at: new Date(now).toISOString() }), { condition: { kind: 'absent' } });
      crossings.push({ scope: budget.scope, key: budget.key, period, threshold: t.threshold, spentUsd, noticeId: notice.noticeId });
    }
  }
  return crossings;
}
