/**
 * `/compute`: compute per category (`GET /v1/compute/usage`): cost per day stacked by category, the totals per
 * category (GPU-hours, CPU-hours, money, jobs) and the budgets with what they have spent.
 */
import { useState } from 'preact/hooks';
import { buildStackedBarChart } from '../../../shared/chart/build-stacked-bar-chart.ts';
import type { PageProps } from '../page.ts';
import { useLoad } from '../components/use-load.ts';
import { ErrorPanel, Loading } from '../components/page-state.tsx';
import { DataTable } from '../components/data-table.tsx';
import { Badge } from '../components/badge.tsx';
import { ChartView } from '../components/chart-view.tsx';
import { formatUsd } from '../components/format.ts';

interface UsageRow {
  category: string;
  runId?: string;
  day?: string;
  gpuHours: number;
  cpuHours: number;
  costUsd: number;
  jobs: number;
}
interface Budget {
  scope: 'category' | 'run';
  key: string;
  limitUsd: number;
  spentUsd: number;
  crossed: boolean;
  period?: string;
}
interface Usage {
  from: string;
  to: string;
  rows: UsageRow[];
  budgets: Budget[];
}

/** Cost per day, one series per category (a day without a category's jobs is 0). */
export function costPerDay(rows: readonly UsageRow[]): { categories: string[]; series: Array<{ name: string; values: number[] }> } {
  const days = [...new Set(rows.map((r) => r.day ?? ''))].filter(Boolean).sort();
  const categories = [...new Set(rows.map((r) => r.category))].sort();
  return {
    categories: days,
    series: categories.map((c) => ({ name: c, values: days.map((d) => rows.filter((r) => r.category === c && r.day === d).reduce((s, r) => s + r.costUsd, 0)) })),
  };
}

export function ComputePage(props: PageProps) {
  const [window, setWindow] = useState({ from: props.query.get('from') ?? '', to: props.query.get('to') ?? '' });
  const byCategory = useLoad(() => props.api.get<Usage>('/v1/compute/usage', { groupBy: 'category', from: window.from || undefined, to: window.to || undefined }), [window]);
  const byDay = useLoad(() => props.api.get<Usage>('/v1/compute/usage', { groupBy: 'day', from: window.from || undefined, to: window.to || undefined }), [window]);
  const chart = byDay.value ? costPerDay(byDay.value.rows) : undefined;
  return (
    <div>
      <h1>Compute</h1>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          const form = new FormData(e.target as HTMLFormElement);
          setWindow({ from: String(form.get('from') ?? ''), to: String(form.get('to') ?? '') });
        }}
      >
        <label>
          From (day)
          <input name="from" type="date" defaultValue={window.from} />
        </label>
        <label>
          To (day)
          <input name="to" type="date" defaultValue={window.to} />
        </label>
        <button type="submit">Apply</button>
      </form>
      {byCategory.loading && !byCategory.value ? <Loading what="usage" /> : null}
      {byCategory.error ? <ErrorPanel error={byCategory.error} onRetry={byCategory.reload} /> : null}
      {byDay.error && !byCategory.error ? <ErrorPanel error={byDay.error} onRetry={byDay.reload} /> : null}
      {chart && chart.categories.length > 0 ? (
        <ChartView
          label="Compute cost per day by category"
          option={buildStackedBarChart({
            title: 'Compute cost per day',
            subtitle: `by category, ${byDay.value!.from} to ${byDay.value!.to}`,
            categories: chart.categories,
            series: chart.series,
            yAxis: { name: 'USD' },
          })}
        />
      ) : null}
      {byCategory.value ? (
        <>
          <h2>
            By category, {byCategory.value.from} to {byCategory.value.to}
          </h2>
          <DataTable
            rows={byCategory.value.rows}
            rowKey={(r) => r.category}
            empty="No compute used in this window."
            sort={{ key: 'cost', descending: true }}
            columns={[
              { key: 'category', label: 'Category', value: (r) => r.category },
              { key: 'gpu', label: 'GPU-hours', numeric: true, value: (r) => r.gpuHours },
              { key: 'cpu', label: 'CPU-hours', numeric: true, value: (r) => r.cpuHours },
              { key: 'cost', label: 'Cost', numeric: true, value: (r) => r.costUsd, render: (r) => formatUsd(r.costUsd) },
              { key: 'jobs', label: 'Jobs', numeric: true, value: (r) => r.jobs },
            ]}
          />
          <h2>Budgets</h2>
          <DataTable
            rows={byCategory.value.budgets}
            rowKey={(b) => `${b.scope}:${b.key}`}
            empty="No budgets set (flywheel compute budgets set, or POST /v1/compute/budgets)."
            columns={[
              { key: 'scope', label: 'Scope', value: (b) => b.scope },
              { key: 'key', label: 'Of', value: (b) => b.key },
              { key: 'period', label: 'Period', value: (b) => b.period },
              { key: 'limit', label: 'Limit', numeric: true, value: (b) => b.limitUsd, render: (b) => formatUsd(b.limitUsd) },
              { key: 'spent', label: 'Spent', numeric: true, value: (b) => b.spentUsd, render: (b) => formatUsd(b.spentUsd) },
              { key: 'crossed', label: 'State', value: (b) => (b.crossed ? 'crossed' : 'ok'), render: (b) => <Badge status={b.crossed ? 'crossed' : 'ok'} /> },
            ]}
          />
        </>
      ) : null}
    </div>
  );
}
