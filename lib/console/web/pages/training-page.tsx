/**
 * Training runs (`#/training?status=`): each run with its status, base, step against its planned steps, the
 * trainer's last heartbeat, and the checkpoint it registered.
 *
 * @example
 * pages.push({ path: '/training', title: 'Training', nav: true, component: TrainingPage });
 */
import type { TrainingRunView } from '../components/insights/api-views.ts';
import { formatNumber, formatTime, href } from '../components/format.ts';
import { LoadView } from '../components/page-state.tsx';
import { useLoad } from '../components/use-load.ts';
import type { PageProps } from '../page.ts';
import { FilterSelect } from '../components/filter-select.tsx';
import { HeadedTable } from '../components/data-table.tsx';
import { Badge } from '../components/badge.tsx';

const STATUSES = ['queued', 'building-dataset', 'training', 'registering', 'evaluating', 'succeeded', 'failed', 'stopped'] as const;

/** '12 of 20' steps (or the step alone when the plan is unknown). */
export function stepText(run: TrainingRunView): string {
  if (run.step === undefined) return 'not started';
  return `${formatNumber(run.step)} of ${formatNumber(run.request.trainer.steps)}`;
}

export function TrainingPage(props: PageProps) {
  const { api, query, navigate } = props;
  const status = query.get('status') ?? '';
  const runs = useLoad(() => api.get<{ items: TrainingRunView[]; cursor?: string }>('/v1/training-runs', { status, limit: 100 }), [api, status], { clearOnChange: true });
  return (
    <section class="page training-page">
      <h1>Training runs</h1>
      <FilterSelect label="Status " ariaLabel="status filter" any="every status" value={status} options={STATUSES} onChange={(v) => navigate(`/training${v ? `?status=${v}` : ''}`)} />
      <LoadView load={runs} what="training runs">
        {({ items }) =>
          items.length === 0 ? (
            <p class="empty">No training runs{status ? ` ${status}` : ''} yet: `flywheel train run` starts one.</p>
          ) : (
            <HeadedTable class="training-runs" headings={['Run', 'Status', 'Base', 'Step', 'Last heartbeat', 'Checkpoint', 'Created']}>
              {items.map((r) => (
                <tr key={r.runId} data-run={r.runId}>
                  <td>
                    <a href={href(`/training/${encodeURIComponent(r.runId)}`)}>{r.runId}</a>
                  </td>
                  <td>
                    <Badge status={r.status} />
                    {r.error && <div class="error-text">{r.error.error}</div>}
                  </td>
                  <td>{r.request.base}</td>
                  <td>{stepText(r)}</td>
                  <td>{formatTime(r.lastHeartbeatAt)}</td>
                  <td>{r.checkpointId ?? '—'}</td>
                  <td>{formatTime(r.createdAt)}</td>
                </tr>
              ))}
            </HeadedTable>
          )
        }
      </LoadView>
    </section>
  );
}
