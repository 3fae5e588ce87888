/**
 * Experiments (`#/experiments?status=`): every A/B test with its status, arms (the control marked), the ramp step in
 * force, when it started and what was decided.
 *
 * @example
 * pages.push({ path: '/experiments', title: 'Experiments', nav: true, component: ExperimentsPage });
 */
import type { ExperimentView } from '../components/insights/api-views.ts';
import { formatTime, href } from '../components/format.ts';
import { LoadView } from '../components/page-state.tsx';
import { useLoad } from '../components/use-load.ts';
import type { PageProps } from '../page.ts';
import { FilterSelect } from '../components/filter-select.tsx';
import { HeadedTable } from '../components/data-table.tsx';
import { Badge } from '../components/badge.tsx';

const STATUSES = ['draft', 'running', 'stopped', 'decided'] as const;

/** The ramp step in force as '25% (step 2 of 4)'. */
export function rampText(e: ExperimentView): string {
  const step = e.definition.ramp[e.rampStep];
  if (!step) return '—';
  return `${step.percent}% (step ${e.rampStep + 1} of ${e.definition.ramp.length})`;
}

/** What was decided, in a line: 'ship arm b (ckpt-2) by key:ab12'. */
export function decisionText(e: ExperimentView): string | undefined {
  const d = e.decision;
  if (!d) return e.stopReason ? `stopped: ${e.stopReason}` : undefined;
  const what = d.kind === 'ship' ? `ship arm ${d.arm ?? '?'}${d.promoted ? ` (${d.promoted} is the incumbent)` : ''}` : d.kind === 'extend' ? `extend by ${d.extendDays ?? '?'} days` : d.kind;
  return `${what} by ${d.by}, ${formatTime(d.at)}: ${d.reason}`;
}

export function ExperimentsPage(props: PageProps) {
  const { api, query, navigate } = props;
  const status = query.get('status') ?? '';
  const list = useLoad(() => api.get<{ items: ExperimentView[]; cursor?: string }>('/v1/experiments', { status, limit: 100 }), [api, status], { clearOnChange: true });
  return (
    <section class="page experiments-page">
      <h1>Experiments</h1>
      <FilterSelect label="Status " ariaLabel="status filter" any="every status" value={status} options={STATUSES} onChange={(v) => navigate(`/experiments${v ? `?status=${v}` : ''}`)} />
      <LoadView load={list} what="experiments">
        {({ items }) =>
          items.length === 0 ? (
            <p class="empty">No experiments{status ? ` ${status}` : ''} yet.</p>
          ) : (
            <HeadedTable class="experiments" headings={['Experiment', 'Status', 'Arms', 'Ramp', 'Started', 'Decision']}>
              {items.map((e) => (
                <tr key={e.definition.id} data-experiment={e.definition.id}>
                  <td>
                    <a href={href(`/experiments/${encodeURIComponent(e.definition.id)}`)}>{e.definition.name}</a>
                    <div class="muted">{e.definition.id}</div>
                  </td>
                  <td>
                    <Badge status={e.status} />
                  </td>
                  <td>
                    {e.definition.arms.map((a) => (
                      <div key={a.id}>
                        {a.id}: {a.checkpoint}
                        {a.control ? ' (control)' : ''}
                        {e.stoppedArms.some((s) => s.arm === a.id) ? ' — stopped' : ''}
                      </div>
                    ))}
                  </td>
                  <td>{rampText(e)}</td>
                  <td>{formatTime(e.startedAt)}</td>
                  <td>{decisionText(e) ?? '—'}</td>
                </tr>
              ))}
            </HeadedTable>
          )
        }
      </LoadView>
    </section>
  );
}
