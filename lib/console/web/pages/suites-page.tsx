/**
 * Suites (`#/suites`): every suite with its status, tasks, best strict score against its saturation threshold and its
 * useful life so far (creation → saturation or retirement, or → now while it still separates checkpoints) with, for an
 * active suite, how long until it saturates at the pace of its newest sweeps.
 *
 * @example
 * pages.push({ path: '/suites', title: 'Suites', nav: true, component: SuitesPage });
 */
import type { SuiteDetailView, SuiteRow } from '../components/insights/api-views.ts';
import { days, href, num, when } from '../components/insights/format.ts';
import { ResourceView } from '../components/insights/resource-view.tsx';
import { DEFAULT_SATURATION_THRESHOLD, PACE_POINTS, projectSaturation, type SaturationProjection } from '../components/insights/saturation.ts';
import { SaturationMeter } from '../components/insights/saturation-meter.tsx';
import { useResource } from '../components/insights/use-resource.ts';
import type { PageProps } from '../page.ts';
import { statusBadge } from '../components/insights/status-badge.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Active suites whose pace the list reads at most (the rest show their life so far). */
const MAX_PACE_READS = 50;

/** '; about 25 days left at the current pace', or nothing when there is no pace to speak of. */
function paceText(p: SaturationProjection | undefined): string {
  if (!p || p.slopePerDay === undefined) return '';
  if (p.daysLeft !== undefined) return `; about ${days(p.daysLeft)} left at the current pace`;
  return p.slopePerDay <= 0 ? '; not getting closer to saturation' : '';
}

/** Creation → saturation (recorded), else → retirement, else → now. */
export function usefulLifeText(suite: SuiteRow, now = Date.now()): string {
  if (suite.saturatedAt) return `${days(suite.usefulLifeDays ?? (Date.parse(suite.saturatedAt) - Date.parse(suite.createdAt)) / DAY_MS)}, saturated ${when(suite.saturatedAt)}`;
  if (suite.retiredAt) return `${days((Date.parse(suite.retiredAt) - Date.parse(suite.createdAt)) / DAY_MS)}, retired ${when(suite.retiredAt)}`;
  return `${days((now - Date.parse(suite.createdAt)) / DAY_MS)} so far`;
}

export function SuitesPage(props: PageProps) {
  const { api } = props;
  const suites = useResource(async () => {
    const { items } = await api.get<{ items: SuiteRow[] }>('/v1/suites');
    // The pace towards saturation needs each active suite's newest best scores: a bounded number of small reads.
    const active = items.filter((s) => s.status === 'active').slice(0, MAX_PACE_READS);
    const details = await Promise.all(active.map((s) => api.get<SuiteDetailView>(`/v1/suites/${encodeURIComponent(s.id)}`, { points: PACE_POINTS * 2 }).catch(() => undefined)));
    const paces = new Map<string, SaturationProjection>();
    for (const d of details) if (d) paces.set(d.id, projectSaturation(d.bestScores, d.saturationThreshold ?? DEFAULT_SATURATION_THRESHOLD, d.version));
    return { items, paces };
  }, [api]);
  return (
    <section class="page suites-page">
      <h1>Suites</h1>
      <ResourceView resource={suites} what="suites">
        {({ items, paces }) =>
          items.length === 0 ? (
            <p class="empty">No suites yet: `POST /v1/suites` (or `flywheel suite register`) adds one.</p>
          ) : (
            <table class="data-table suites">
              <thead>
                <tr>
                  <th scope="col">Suite</th>
                  <th scope="col">Status</th>
                  <th scope="col">Tasks</th>
                  <th scope="col">Saturation</th>
                  <th scope="col">Best by</th>
                  <th scope="col">Useful life</th>
                </tr>
              </thead>
              <tbody>
                {items.map((s) => (
                  <tr key={s.id} data-suite={s.id}>
                    <td>
                      <a href={href(`/suites/${encodeURIComponent(s.id)}`)}>{s.id}</a> <span class="muted">v{s.version} · {s.visibility}</span>
                      {s.description && <div class="muted">{s.description}</div>}
                    </td>
                    <td>
                      <span class={`badge ${statusBadge(s.status)}`}>{s.status}</span>
                    </td>
                    <td>{num(s.taskCount)}</td>
                    <td>
                      <SaturationMeter best={s.best?.score} threshold={s.saturationThreshold ?? DEFAULT_SATURATION_THRESHOLD} thresholdIsDefault={s.saturationThreshold === undefined} />
                    </td>
                    <td>{s.best ? `${s.best.checkpoint} (${when(s.best.at)})` : '—'}</td>
                    <td>
                      {usefulLifeText(s)}
                      {paceText(paces.get(s.id))}
                    </td>
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
