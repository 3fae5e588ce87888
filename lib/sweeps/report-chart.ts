/**
 * The sweep report's chart: one panel per suite, one group per checkpoint, strict beside lenient, each bar with its
 * 95% interval as an error bar and its score written above, on a 0–100% axis. Checkpoint names are written whole
 * (rotated when long); a 0 score is a sliver with "0%". The options come from the shared builder
 * (`lib/shared/chart/build-interval-bar-chart.ts`), so the console draws the same chart; the PNG is ECharts' SVG
 * rendered by resvg (`lib/shared/chart/render-chart.ts`).
 */
import type { EChartsOption } from 'echarts';
import { buildIntervalBarChart, type IntervalValue } from '../shared/chart/build-interval-bar-chart.ts';
import { categoryLabelRotation } from '../shared/chart/chart-theme.ts';
import { renderChartsPng, type ChartSize } from '../shared/chart/render-chart.ts';
import type { SweepReport } from './schemas.ts';
import { HARNESS_MODES } from '../harness/task/harness-mode.ts';

/** A suite's panel at its smallest; long checkpoint names (rotated) make it taller. */
const PANEL = { width: 900, height: 420 } as const;

/**
 * One chart option per suite of the report: categories are the sweep's checkpoints, series strict and lenient.
 *
 * @example
 * const [first] = reportChartOptions(await getSweepReport(ports, 'nightly-1'));
 */
export function reportChartOptions(report: SweepReport): EChartsOption[] {
  const checkpoints = report.sweep.checkpoints;
  return report.sweep.suites.map((s) =>
    buildIntervalBarChart({
      title: `Sweep ${report.sweep.sweepId} · suite ${s.id}`,
      subtitle: 'score per checkpoint, strict beside lenient, 95% interval',
      categories: [...checkpoints],
      series: HARNESS_MODES.map((mode) => ({
        name: mode,
        values: checkpoints.map((checkpoint): IntervalValue | null => {
          const r = report.results.find((x) => x.suite === s.id && x.checkpoint === checkpoint && x.mode === mode);
          if (!r || r.score === null) return null;
          return r.ci ? { value: r.score, low: r.ci.low, high: r.ci.high } : { value: r.score };
        }),
      })),
      yAxis: { name: 'score', percent: true, min: 0, max: 1 },
    }),
  );
}

/** The size of one suite's panel: taller when the checkpoint names are rotated, so the bars keep their room. */
export function reportPanelSize(report: SweepReport): ChartSize {
  const rotate = categoryLabelRotation(report.sweep.checkpoints, PANEL.width - 120);
  const longest = report.sweep.checkpoints.reduce((m, c) => Math.max(m, c.length), 0);
  const extra = rotate === 0 ? 0 : Math.round(longest * 7 * Math.sin((rotate * Math.PI) / 180));
  return { width: PANEL.width, height: PANEL.height + extra };
}

/** The size of the whole PNG: the suites' panels stacked. */
export function reportChartSize(report: SweepReport): ChartSize {
  const panel = reportPanelSize(report);
  return { width: panel.width, height: panel.height * Math.max(1, report.sweep.suites.length) };
}

/**
 * The report's chart as PNG bytes.
 *
 * @example
 * await writeFile('report.png', await renderReportChart(await getSweepReport(ports, 'nightly-1')));
 */
export async function renderReportChart(report: SweepReport): Promise<Buffer> {
  return Buffer.from(await renderChartsPng(reportChartOptions(report), { columns: 1, cell: reportPanelSize(report) }));
}
