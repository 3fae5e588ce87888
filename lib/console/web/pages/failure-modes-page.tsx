/**
 * `/failure-modes`: failure modes per checkpoint over time. The timeline (`GET /v1/failure-modes/timeline`) draws
 * each mode's rate per day for the chosen checkpoint; the table below (`GET /v1/failure-modes`) gives this window's
 * counts, rates per thousand turns and trend against the window before.
 */
import { useState } from 'preact/hooks';
import { buildLineChart } from '../../../shared/chart/build-line-chart.ts';
import type { PageProps } from '../page.ts';
import { useLoad } from '../components/use-load.ts';
import { ErrorPanel, Loading } from '../components/page-state.tsx';
import { DataTable } from '../components/data-table.tsx';
import { Badge } from '../components/badge.tsx';
import { ChartView } from '../components/chart-view.tsx';
import { formatNumber, formatPercent } from '../components/format.ts';

interface TimelinePoint {
  start: string;
  signals: number;
  classified: number;
  modes: Record<string, { count: number; rate: number | null }>;
}
interface Timeline {
  from: string;
  to: string;
  bucket: 'day' | 'week';
  modes: string[];
  checkpoints: Array<{ checkpoint: string; points: TimelinePoint[] }>;
}
interface ModeCount {
  mode: string;
  count: number;
  byLabel: { people: number; confident: number; unreviewed: number };
  perThousandTurns: number;
  previousPerThousandTurns: number;
  trend: string;
  change: number | null;
}
interface FailureModes {
  window: { since: string; until: string };
  checkpoints: Array<{ model: string; totals: { signals: number; turns: number }; modes: ModeCount[] }>;
}

/** Lines to draw at most (the most frequent modes). */
const MAX_LINES = 8;

/** The timeline of one checkpoint as lines: one per mode, its rate per bucket. */
export function timelineSeries(timeline: Timeline, checkpoint: string): Array<{ name: string; points: Array<[number, number]> }> {
  const cp = timeline.checkpoints.find((c) => c.checkpoint === checkpoint);
  if (!cp) return [];
  return timeline.modes.slice(0, MAX_LINES).map((mode) => ({
    name: mode,
    points: cp.points.map((p): [number, number] => [Date.parse(`${p.start}T00:00:00Z`), p.modes[mode]?.rate ?? 0]),
  }));
}

export function FailureModesPage(props: PageProps) {
  const [bucket, setBucket] = useState<'day' | 'week'>((props.query.get('bucket') as 'week' | null) ?? 'day');
  const timeline = useLoad(() => props.api.get<Timeline>('/v1/failure-modes/timeline', { bucket }), [bucket]);
  const counts = useLoad(() => props.api.get<FailureModes>('/v1/failure-modes'), []);
  const checkpoints = timeline.value?.checkpoints.map((c) => c.checkpoint) ?? counts.value?.checkpoints.map((c) => c.model) ?? [];
  const [chosen, setChosen] = useState<string | undefined>(props.query.get('checkpoint') ?? undefined);
  const checkpoint = chosen && checkpoints.includes(chosen) ? chosen : checkpoints[0];
  const series = timeline.value && checkpoint ? timelineSeries(timeline.value, checkpoint) : [];
  const modes = counts.value?.checkpoints.find((c) => c.model === checkpoint)?.modes.filter((m) => m.count > 0 || m.previousPerThousandTurns > 0) ?? [];
  return (
    <div>
      <h1>Failure modes</h1>
      <div class="filters">
        <label>
          Checkpoint
          <select name="checkpoint" value={checkpoint ?? ''} onChange={(e) => setChosen((e.target as HTMLSelectElement).value)}>
            {checkpoints.length === 0 ? <option value="">none yet</option> : null}
            {checkpoints.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </label>
        <label>
          Bucket
          <select name="bucket" value={bucket} onChange={(e) => setBucket((e.target as HTMLSelectElement).value as 'day' | 'week')}>
            <option value="day">day</option>
            <option value="week">week</option>
          </select>
        </label>
      </div>
      <h2>Over time</h2>
      {timeline.loading && !timeline.value ? <Loading what="the timeline" /> : null}
      {timeline.error ? <ErrorPanel error={timeline.error} onRetry={timeline.reload} /> : null}
      {timeline.value && series.length > 0 && checkpoint ? (
        <ChartView
          label={`Failure-mode rates of ${checkpoint} per ${bucket}`}
          option={buildLineChart({
            title: `Failure modes of ${checkpoint}`,
            subtitle: `share of classified signals per ${bucket}, ${timeline.value.from} to ${timeline.value.to}`,
            x: { type: 'time' },
            y: { name: 'share of signals', percent: true },
            series,
          })}
        />
      ) : timeline.value ? (
        <p class="empty">No failure modes labelled in this range yet.</p>
      ) : null}
      <h2>This window</h2>
      {counts.loading && !counts.value ? <Loading what="counts" /> : null}
      {counts.error ? <ErrorPanel error={counts.error} onRetry={counts.reload} /> : null}
      {counts.value ? (
        <DataTable
          rows={modes}
          rowKey={(m) => m.mode}
          sort={{ key: 'count', descending: true }}
          empty={checkpoint ? `No failure modes for ${checkpoint} in the last 7 days.` : 'No checkpoint has signals yet.'}
          columns={[
            { key: 'mode', label: 'Mode', value: (m) => m.mode },
            { key: 'count', label: 'Count', numeric: true, value: (m) => m.count },
            { key: 'rate', label: 'Per 1,000 turns', numeric: true, value: (m) => m.perThousandTurns },
            { key: 'previous', label: 'Window before', numeric: true, value: (m) => m.previousPerThousandTurns },
            { key: 'trend', label: 'Trend', value: (m) => m.trend, render: (m) => <Badge status={m.trend} /> },
            { key: 'change', label: 'Change', numeric: true, value: (m) => m.change ?? undefined, render: (m) => (m.change === null ? '—' : formatPercent(m.change)) },
            { key: 'people', label: 'By people', numeric: true, value: (m) => m.byLabel.people },
            { key: 'unreviewed', label: 'Unreviewed', numeric: true, value: (m) => m.byLabel.unreviewed, render: (m) => formatNumber(m.byLabel.unreviewed) },
          ]}
        />
      ) : null}
    </div>
  );
}
