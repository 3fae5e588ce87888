/**
 * `flywheel compute …`: compute accounted per category over the API (a deployed stage or the local runtime):
 * `usage` (GPU-hours, CPU-hours, USD per category, by run or by day, with totals and the budgets' spend),
 * `budget set` (a category's monthly or a run's lifetime budget in USD) and `budget list`.
 *
 * @example
 * npx flywheel compute usage --by run --from 2026-12-01
 * npx flywheel compute budget set --category training --usd 500
 */
import type { Command } from 'commander';
import type { BudgetStatus, ComputeUsageAnswer, UsageRow } from '../compute/schemas.ts';
import { formatUsd as usd } from '../shared/format-usd.ts';
import { table } from './table.ts';
import { callForCli, fieldFlags, targetOptions, type JsonFlags } from './target.ts';

interface UsageFlags extends JsonFlags {
  by?: string;
  from?: string;
  to?: string;
}
interface BudgetSetFlags extends JsonFlags {
  category?: string;
  run?: string;
  usd: string;
}

/** Hours with two decimals, thousands grouped. */
const hours = (n: number) => n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/**
 * The usage answer as a person reads it: one row per group, a total row, then the budgets.
 *
 * @example
 * process.stdout.write(formatUsage(answer));
 */
export function formatUsage(answer: ComputeUsageAnswer): string {
  const extra = answer.groupBy === 'run' ? ['run'] : answer.groupBy === 'day' ? ['day'] : [];
  const cells = (r: UsageRow) => [r.category, ...(answer.groupBy === 'run' ? [r.runId ?? '(none)'] : answer.groupBy === 'day' ? [r.day ?? ''] : []), hours(r.gpuHours), hours(r.cpuHours), usd(r.costUsd), String(r.jobs)];
  const total = answer.rows.reduce((t, r) => ({ gpuHours: t.gpuHours + r.gpuHours, cpuHours: t.cpuHours + r.cpuHours, costUsd: t.costUsd + r.costUsd, jobs: t.jobs + r.jobs }), { gpuHours: 0, cpuHours: 0, costUsd: 0, jobs: 0 });
  const lines = [`Compute usage ${answer.from} to ${answer.to} (UTC), by ${answer.groupBy}`, ''];
  if (answer.rows.length === 0) lines.push('No compute used in this period.', '');
  else {
    const rows = [...answer.rows.map(cells), ['total', ...extra.map(() => ''), hours(total.gpuHours), hours(total.cpuHours), usd(total.costUsd), String(total.jobs)]];
    lines.push(table(['category', ...extra, 'GPU-hours', 'CPU-hours', 'cost', 'jobs'], rows));
  }
  if (answer.budgets.length > 0) lines.push(formatBudgets(answer.budgets));
  return `${lines.join('\n').trimEnd()}\n`;
}

/** Budgets with their spend and share of the limit. */
export function formatBudgets(budgets: BudgetStatus[]): string {
  if (budgets.length === 0) return 'No budgets. Set one: flywheel compute budget set --category C --usd N (or --run R)\n';
  return table(
    ['budget', 'period', 'limit', 'spent', 'used', 'state'],
    budgets.map((b) => [
      `${b.scope} ${b.key}`,
      b.period ?? (b.scope === 'category' ? 'month' : 'lifetime'),
      usd(b.limitUsd),
      usd(b.spentUsd),
      `${Math.round((b.spentUsd / b.limitUsd) * 100)}%`,
      b.crossed ? 'over' : b.spentUsd >= 0.8 * b.limitUsd ? 'near' : 'ok',
    ]),
  );
}

function withOptions(command: Command): Command {
  return targetOptions(command).option('--json', 'print the raw JSON answer');
}

export function registerComputeCommands(program: Command): void {
  const compute = program.command('compute').description('compute accounted per category: usage (GPU-hours, CPU-hours, cost) and budgets');
  fieldFlags(
    withOptions(
      compute
        .command('usage')
        .description('GPU-hours, CPU-hours and cost per category (and run or day) between two UTC days, with totals and budgets')
        .option('--by <group>', 'category, run or day', 'category')
        .option('--from <date>', 'first day, YYYY-MM-DD (default: the first of the month)')
        .option('--to <date>', 'last day, YYYY-MM-DD (default: today)'),
    ),
    { groupBy: '--by' },
  ).action(async (flags: UsageFlags) => {
    const query = new URLSearchParams({ groupBy: flags.by ?? 'category', ...(flags.from ? { from: flags.from } : {}), ...(flags.to ? { to: flags.to } : {}) });
    const answer = await callForCli<ComputeUsageAnswer>(flags, 'GET', `/v1/compute/usage?${query}`);
    if (answer) process.stdout.write(formatUsage(answer));
  });

  const budget = compute.command('budget').description('budgets per category (USD a month) and per run (USD over its life)');
  fieldFlags(
    withOptions(
      budget
        .command('set')
        .description('set a budget: 80% spent raises a warning notice, 100% an alert')
        .option('--category <category>', 'inference, training, data-and-reward, evaluation or research')
        .option('--run <runId>', 'a run id (sweep, training run, eval run)')
        .requiredOption('--usd <amount>', 'the limit in USD'),
    ),
    { category: '--category', runId: '--run', limitUsd: '--usd' },
  ).action(async (flags: BudgetSetFlags) => {
    const amount = Number(flags.usd);
    const body = { ...(flags.category ? { category: flags.category } : {}), ...(flags.run ? { runId: flags.run } : {}), limitUsd: flags.usd.trim() !== '' && Number.isFinite(amount) ? amount : flags.usd };
    const answer = await callForCli<{ budget: { scope: string; key: string; limitUsd: number; period: string } }>(flags, 'POST', '/v1/compute/budgets', body);
    if (answer) process.stdout.write(`Budget set: ${answer.budget.scope} ${answer.budget.key}, ${usd(answer.budget.limitUsd)} per ${answer.budget.period === 'month' ? 'month' : 'run'}\n`);
  });
  withOptions(budget.command('list').description('budgets with their spend in the current period')).action(async (flags: JsonFlags) => {
    const answer = await callForCli<{ budgets: BudgetStatus[] }>(flags, 'GET', '/v1/compute/budgets');
    if (answer) process.stdout.write(formatBudgets(answer.budgets));
  });
}
