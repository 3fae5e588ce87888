/**
 * Suites (`#/suites`): every suite with its status, tasks, best strict score against its saturation threshold and its
 * useful life so far (creation → saturation or retirement, or → now while it still separates checkpoints) with, for an
 * active suite, how long until it saturates at the pace of its newest sweeps.
 *
 * @example
 * pages.push({ path: '/suites', title: 'Suites', nav: true, component: SuitesPage });
 */
import type { SuiteDetailView, SuiteRow } from '../components/insights/api-views.ts';
import { formatDays, formatNumber, formatTime, href } from '../components/format.ts';
import { LoadView } from '../components/page-state.tsx';
import { DEFAULT_SATURATION_THRESHOLD, PACE_POINTS, projectSaturation, type SaturationProjection } from '../components/insights/saturation.ts';
import { SaturationMeter } from '../components/insights/saturation-meter.tsx';
import { useLoad } from '../components/use-load.ts';
import type { PageProps } from '../page.ts';
import { HeadedTable } from '../components/data-table.tsx';
import { Badge } from '../components/badge.tsx';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Active suites whose pace the list reads at most (the rest show their life so far). */
const MAX_PACE_READS = 50;

/** '; about 25 days left at the current pace', or nothing when there is no pace to speak of. */
function paceText(p: SaturationProjection | undefined): string {
  if (!p || p.slopePerDay === undefined) return '';
  if (p.daysLeft !== undefined) return `; about ${formatDays(p.daysLeft)} left at the current pace`;
  return p.slopePerDay <= 0 ? '; not getting closer to saturation' : '';
}

/** Creation → saturation (recorded), else → retirement, else → now. */
export function usefulLifeText(suite: SuiteRow, now = Date.now()): string {
  if (suite.saturatedAt) return `${formatDays(suite.usefulLifeDays ?? (Date.parse(suite.saturatedAt) - Date.parse(suite.createdAt)) / DAY_MS)}, saturated ${formatTime(suite.saturatedAt)}`;
  if (suite.retiredAt) return `${formatDays((Date.parse(suite.retiredAt) - Date.parse(suite.createdAt)) / DAY_MS)}, retired ${formatTime(suite.retiredAt)}`;
  return `${formatDays((now - Date.parse(suite.createdAt)) / DAY_MS)} so far`;
}

export function SuitesPage(props: PageProps) {
  const { api } = props;
  const suites = useLoad(async () => {
    const { items } = await api.get<{ items: SuiteRow[] }>('/v1/suites');
    // The pace towards saturation needs each active suite's newest best scores: a bounded number of small reads.
    const active = items.filter((s) => s.status === 'active').slice(0, MAX_PACE_READS);
    const details = await Promise.all(active.map((s) => api.get<SuiteDetailView>(`/v1/suites/${encodeURIComponent(s.id)}`, { points: PACE_POINTS * 2 }).catch(() => undefined)));
    const paces = new Map<string, SaturationProjection>();
    for (const d of details) if (d) paces.set(d.id, projectSaturation(d.bestScores, d.saturationThreshold ?? DEFAULT_SATURATION_THRESHOLD, d.version));
    return { items, paces };
  }, [api], { clearOnChange: true });
  return (
    <section class="page suites-page">
      <h1>Suites</h1>
      <LoadView load={suites} what="suites">
        {({ items, paces }) =>
          items.length === 0 ? (
            <p class="empty">No suites yet: `POST /v1/suites` (or `flywheel suite register`) adds one.</p>
          ) : (
            <HeadedTable class="suites" headings={['Suite', 'Status', 'Tasks', 'Saturation', 'Best by', 'Useful life']}>
              {items.map((s) => (
                <tr key={s.id} data-suite={s.id}>
                  <td>
                    <a href={href(`/suites/${encodeURIComponent(s.id)}`)}>{s.id}</a> <span class="muted">v{s.version} · {s.visibility}</span>
                    {s.description && <div class="muted">{s.description}</div>}
                  </td>
                  <td>
                    <Badge status={s.status} />
                  </td>
                  <td>{formatNumber(s.taskCount)}</td>
                  <td>
                    <SaturationMeter best={s.best?.score} threshold={s.saturationThreshold ?? DEFAULT_SATURATION_THRESHOLD} thresholdIsDefault={s.saturationThreshold === undefined} />
                  </td>
                  <td>{s.best ? `${s.best.checkpoint} (${formatTime(s.best.at)})` : '—'}</td>
                  <td>
                    {usefulLifeText(s)}
                    {paceText(paces.get(s.id))}
                  </td>
                </tr>
              ))}
            </HeadedTable>
          )
        }
      </LoadView>
    </section>
  );
}
