/**
 * A metric's lift as a PNG, two panels: on top the latest analysis as a forest plot (each treatment arm's relative
 * lift against the control with its interval, coloured by verdict, and the 0 line); below, the lift over the stored
 * analyses, one line per arm with its interval as a band. The interval is the always-valid one when the experiment is
 * sequential, else the fixed 95% one. Both panels come from the shared builders (`lib/shared/chart/`, the console's
 * too), rendered by ECharts and resvg.
 *
 * `liftSeries` extracts the points; `liftChartOptions` the two chart options; `renderLiftChart` the PNG.
 */
import type { EChartsOption } from 'echarts';
import { buildLiftChart } from '../../shared/chart/build-lift-chart.ts';
import { buildLineChart } from '../../shared/chart/build-line-chart.ts';
import { renderChartsPng, type ChartSize } from '../../shared/chart/render-chart.ts';
import type { ExperimentAnalysis } from '../schemas.ts';

export interface LiftPoint {
  at: number;
  lift: number;
  low: number;
  high: number;
  verdict: 'better' | 'worse' | 'inconclusive' | 'too-few-units';
}

export interface LiftSeries {
  arm: string;
  points: LiftPoint[];
}

/** Both panels are this size: the picture is 900 × 800. */
export const LIFT_PANEL: ChartSize = { width: 900, height: 400 };

/**
 * One series per treatment arm that has a relative lift, points in time order.
 *
 * @example
 * const series = liftSeries('accepted', analyses, true);
 */
export function liftSeries(metric: string, analyses: readonly ExperimentAnalysis[], sequential: boolean): LiftSeries[] {
  const ordered = [...analyses].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  const byArm = new Map<string, LiftPoint[]>();
  for (const a of ordered) {
    const m = a.metrics.find((x) => x.metric === metric);
    for (const c of m?.comparisons ?? []) {
      const ci = sequential ? (c.sequentialCi ?? c.ci) : c.ci;
      if (c.relativeLift === null || !ci) continue;
      let points = byArm.get(c.arm);
      if (!points) byArm.set(c.arm, (points = []));
      points.push({ at: Date.parse(a.at), lift: c.relativeLift, low: ci.low, high: ci.high, verdict: c.verdict });
    }
  }
  return [...byArm.entries()].map(([arm, points]) => ({ arm, points }));
}

/**
 * The two chart options: the latest lifts (forest plot) and the lifts over time.
 *
 * @example
 * const [latest, overTime] = liftChartOptions('exp-1', 'accepted', analyses, true);
 */
export function liftChartOptions(experimentId: string, metric: string, analyses: readonly ExperimentAnalysis[], sequential: boolean): EChartsOption[] {
  const series = liftSeries(metric, analyses, sequential);
  const interval = sequential ? 'always-valid interval' : 'fixed 95% interval';
  const latest = series.map((s) => s.points.at(-1)!);
  const forest = buildLiftChart({
    title: series.length === 0 ? `${experimentId}: ${metric}: no lift yet` : `${experimentId}: ${metric}, relative lift`,
    subtitle: `latest analysis, ${interval}`,
    percent: true,
    rows: series.map((s, i) => {
      const p = latest[i]!;
      return { label: s.arm, estimate: p.lift, low: p.low, high: p.high, verdict: p.verdict === 'better' ? 'better' : p.verdict === 'worse' ? 'worse' : 'flat' };
    }),
  });
  const overTime = buildLineChart({
    title: `${metric}: relative lift over time`,
    subtitle: `${series.reduce((n, s) => Math.max(n, s.points.length), 0)} analyses, ${interval} as a band`,
    x: { type: 'time' },
    y: { name: 'relative lift', percent: true },
    series: series.map((s) => ({
      name: s.arm,
      points: s.points.map((p): [number, number] => [p.at, p.lift]),
      band: s.points.map((p): [number, number, number] => [p.at, p.low, p.high]),
    })),
  });
  return [forest, overTime];
}

/**
 * The PNG of a metric's lift: the latest analysis above, the history below.
 *
 * @example
 * await blobs.put(archiveKeys.liftChart(tenant, 'exp-1', 'accepted'), await renderLiftChart('exp-1', 'accepted', analyses, true), { contentType: 'image/png' });
 */
export async function renderLiftChart(experimentId: string, metric: string, analyses: readonly ExperimentAnalysis[], sequential: boolean): Promise<Buffer> {
  return Buffer.from(await renderChartsPng(liftChartOptions(experimentId, metric, analyses, sequential), { columns: 1, cell: LIFT_PANEL }));
}
