/**
 * Training runs (`#/training?status=`): each run with its status, base, step against its planned steps, the
 * trainer's last heartbeat, and the checkpoint it registered.
 *
 * @example
 * pages.push({ path: '/training', title: 'Training', nav: true, component: TrainingPage });
 */
import type { TrainingRunView } from '../components/insights/api-views.ts';
import { href, num, when } from '../components/insights/format.ts';
import { ResourceView } from '../components/insights/resource-view.tsx';
import { useResource } from '../components/insights/use-resource.ts';
import type { PageProps } from '../page.ts';
import { statusBadge } from '../components/insights/status-badge.ts';

const STATUSES = ['queued', 'building-dataset', 'training', 'registering', 'evaluating', 'succeeded', 'failed', 'stopped'] as const;

/** '12 of 20' steps (or the step alone when the plan is unknown). */
export function stepText(run: TrainingRunView): string {
  if (run.step === undefined) return 'not started';
  return `${num(run.step)} of ${num(run.request.trainer.steps)}`;
}

export function TrainingPage(props: PageProps) {
  const { api, query, navigate } = props;
  const status = query.get('status') ?? '';
  const runs = useResource(() => api.get<{ items: TrainingRunView[]; cursor?: string }>('/v1/training-runs', { status, limit: 100 }), [api, status]);
  return (
    <section class="page training-page">
      <h1>Training runs</h1>
      <label>
        Status{' '}
        <select value={status} aria-label="status filter" onChange={(e) => navigate(`/training${(e.currentTarget as HTMLSelectElement).value ? `?status=${(e.currentTarget as HTMLSelectElement).value}` : ''}`)}>
          <option value="">every status</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
      <ResourceView resource={runs} what="training runs">
        {({ items }) =>
          items.length === 0 ? (
            <p class="empty">No training runs{status ? ` ${status}` : ''} yet: `flywheel train run` starts one.</p>
          ) : (
            <table class="data-table training-runs">
              <thead>
                <tr>
                  <th scope="col">Run</th>
                  <th scope="col">Status</th>
                  <th scope="col">Base</th>
                  <th scope="col">Step</th>
                  <th scope="col">Last heartbeat</th>
                  <th scope="col">Checkpoint</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {items.map((r) => (
                  <tr key={r.runId} data-run={r.runId}>
                    <td>
                      <a href={href(`/training/${encodeURIComponent(r.runId)}`)}>{r.runId}</a>
                    </td>
                    <td>
                      <span class={`badge ${statusBadge(r.status)}`}>{r.status}</span>
                      {r.error && <div class="error-text">{r.error.error}</div>}
                    </td>
                    <td>{r.request.base}</td>
                    <td>{stepText(r)}</td>
                    <td>{when(r.lastHeartbeatAt)}</td>
                    <td>{r.checkpointId ?? '—'}</td>
                    <td>{when(r.createdAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </ResourceView>
    </section>
  );
}
