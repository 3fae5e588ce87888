/**
 * One suite (`#/suites/:id`): its facts, saturation (best strict score against the threshold), useful life (how long
 * it has separated checkpoints and, at the pace of the newest sweeps, how long until it saturates), its best score
 * over time with the threshold drawn, and the retire button (admin; asks for a reason and a confirmation).
 *
 * @example
 * pages.push({ path: '/suites/:id', title: 'Suite', nav: false, component: SuitePage });
 */
import { useState } from 'preact/hooks';
import { buildLineChart } from '../../../shared/chart/build-line-chart.ts';
import { ChartView } from '../components/chart-view.tsx';
import { ActionButton } from '../components/insights/action-button.tsx';
import type { SuiteDetailView } from '../components/insights/api-views.ts';
import { FieldRows } from '../components/value.tsx';
import { formatDays, formatNumber, formatPercent, formatTime, href } from '../components/format.ts';
import { LoadView } from '../components/page-state.tsx';
import { DEFAULT_SATURATION_THRESHOLD, projectSaturation } from '../components/insights/saturation.ts';
import { SaturationMeter } from '../components/insights/saturation-meter.tsx';
import { useLoad } from '../components/use-load.ts';
import type { PageProps } from '../page.ts';
import { Badge } from '../components/badge.tsx';

function usefulLifeLine(suite: SuiteDetailView, daysLeft: number | undefined, slopePerDay: number | undefined): string {
  const life = suite.usefulLife;
  if (life.endedBy === 'saturation') return `Saturated after ${formatDays(life.days)} (${formatTime(life.endedAt)}).`;
  if (life.endedBy === 'retirement') return `Retired after ${formatDays(life.days)} without saturating (${formatTime(life.endedAt)}).`;
  if (daysLeft !== undefined) return `Useful for ${formatDays(life.days)} so far; about ${formatDays(daysLeft)} left at the current pace (+${formatPercent(slopePerDay, 2)} a day).`;
  if (slopePerDay !== undefined) return `Useful for ${formatDays(life.days)} so far; the best score is not rising, so no saturation is in sight.`;
  return `Useful for ${formatDays(life.days)} so far; too few sweeps to measure a pace.`;
}

function RetireForm(props: { suite: SuiteDetailView; onDone: () => void; api: PageProps['api'] }) {
  const [reason, setReason] = useState('');
  if (props.suite.status === 'retired') return null;
  return (
    <div class="retire">
      <h2>Retire</h2>
      <label>
        Reason{' '}
        <input value={reason} onInput={(e) => setReason((e.currentTarget as HTMLInputElement).value)} aria-label="retire reason" placeholder="why sweeps should stop running it" />
      </label>{' '}
      <ActionButton
        label="Retire suite"
        danger
        disabled={reason.trim() === ''}
        confirm={`Retire suite ${props.suite.id}? Sweeps stop running it; its results are kept.`}
        run={() => props.api.post(`/v1/suites/${encodeURIComponent(props.suite.id)}/retire`, { reason: reason.trim() })}
        done="Retired."
        onDone={props.onDone}
      />
    </div>
  );
}

export function SuitePage(props: PageProps) {
  const { api, params } = props;
  const id = params['id'] ?? '';
  const suite = useLoad(() => api.get<SuiteDetailView>(`/v1/suites/${encodeURIComponent(id)}`), [api, id], { clearOnChange: true });
  return (
    <section class="page suite-page">
      <h1>Suite {id}</h1>
      <LoadView load={suite} what={`suite ${id}`}>
        {(s) => {
          const threshold = s.saturationThreshold ?? DEFAULT_SATURATION_THRESHOLD;
          const projection = projectSaturation(s.bestScores, threshold, s.version);
          const current = s.bestScores.filter((p) => p.suiteVersion === s.version);
          return (
            <>
              <FieldRows
                label="suite"
                rows={[
                  ['Status', <Badge status={s.status} />],
                  ['Version', `v${s.version}`],
                  ['Visibility', s.visibility === 'private' ? 'private (held out of training)' : 'public'],
                  ['Owner', s.owner],
                  ['Description', s.description],
                  ['Tasks', formatNumber(s.taskCount)],
                  ['Created', formatTime(s.createdAt)],
                  ['Saturation', <SaturationMeter best={projection.current ?? s.best?.score} threshold={threshold} thresholdIsDefault={s.saturationThreshold === undefined} />],
                  ['Best', s.best ? <a href={href('/results', { suite: s.id, checkpoint: s.best.checkpoint })}>{`${formatPercent(s.best.score)} by ${s.best.checkpoint} (sweep ${s.best.sweepId}, ${formatTime(s.best.at)})`}</a> : undefined],
                  ['Useful life', <span class="useful-life">{usefulLifeLine(s, projection.daysLeft, projection.slopePerDay)}</span>],
                  ['Retired', s.retiredAt ? `${formatTime(s.retiredAt)}${s.retiredBy ? ` by ${s.retiredBy}` : ''}: ${s.retiredReason ?? 'no reason given'}` : undefined],
                ]}
              />
              <p>
                <a href={href('/results', { suite: s.id })}>Results on this suite</a> · <a href={href('/attempts', { suite: s.id })}>Attempts</a>
              </p>
              {current.length > 0 && (
                <ChartView
                  label="best strict score over time"
                  height={320}
                  option={buildLineChart({
                    title: `Best strict score on ${s.id} v${s.version}`,
                    subtitle: `saturation threshold ${formatPercent(threshold, 0)}`,
                    x: { name: 'sweep', type: 'time' },
                    y: { name: 'best strict pass@1', percent: true },
                    series: [
                      { name: 'best strict score', points: current.map((p) => [Date.parse(p.at), p.score] as [number, number]) },
                      { name: 'threshold', points: [[Date.parse(current[0]!.at), threshold], [Date.parse(current[current.length - 1]!.at), threshold]] },
                    ],
                  })}
                />
              )}
              <RetireForm suite={s} api={api} onDone={suite.reload} />
            </>
          );
        }}
      </LoadView>
    </section>
  );
}
