/**
 * A forest plot of lifts: one row per metric or arm, its estimate as a dot and its interval as a horizontal error
 * bar, coloured by verdict (better green, worse red, flat grey), and the 0 line (no change). Row labels are written
 * whole; the estimate and its interval are written beside each dot. Browser-safe.
 */
import type { CustomSeriesRenderItemAPI, CustomSeriesRenderItemReturn, EChartsOption } from 'echarts';
import { baseOption, CHART_COLORS, CHART_FONT_FAMILY, CHART_FONT_SIZES, formatNumber, formatPercent, gridOption, titleOption } from './chart-theme.ts';

export interface LiftChartInput {
  title: string;
  subtitle?: string;
  rows: Array<{ label: string; estimate: number; low: number; high: number; verdict?: 'better' | 'worse' | 'flat' }>;
  /** Values are fractions to show as percentages (a relative lift). */
  percent?: boolean;
}

const VERDICT_COLORS = { better: CHART_COLORS.better, worse: CHART_COLORS.worse, flat: CHART_COLORS.flat } as const;

/**
 * The ECharts option of a lift forest plot.
 *
 * @example
 * buildLiftChart({ title: 'exp-1: lift', percent: true,
 *   rows: [{ label: 'accepted (arm b)', estimate: 0.12, low: 0.03, high: 0.2, verdict: 'better' }] });
 */
export function buildLiftChart(input: LiftChartInput): EChartsOption {
  const percent = input.percent ?? false;
  const format = (v: number) => (percent ? formatPercent(v, true) : formatNumber(v));
  const rows = input.rows.filter((r) => [r.estimate, r.low, r.high].every((v) => Number.isFinite(v)));
  const labels = rows.map((r) => r.label);
  const colorOf = (r: (typeof rows)[number]) => VERDICT_COLORS[r.verdict ?? 'flat'];
  // 0 always inside, with a margin either side.
  let min = 0;
  let max = 0;
  for (const r of rows) {
    min = Math.min(min, r.low, r.estimate);
    max = Math.max(max, r.high, r.estimate);
  }
  const span = max - min || 0.02;

  return {
    ...baseOption(),
    title: titleOption(input.title, input.subtitle),
    tooltip: { trigger: 'item' },
    grid: gridOption(Boolean(input.subtitle)),
    xAxis: {
      type: 'value',
      min: min - span * 0.05,
      max: max + span * 0.1,
      splitLine: { lineStyle: { color: CHART_COLORS.grid } },
      axisLabel: { formatter: (v: number) => format(v), color: CHART_COLORS.text, fontFamily: CHART_FONT_FAMILY, hideOverlap: true },
    },
    yAxis: {
      type: 'category',
      data: labels,
      inverse: true,
      axisTick: { show: false },
      axisLine: { show: false },
      axisLabel: { interval: 0, color: CHART_COLORS.text, fontFamily: CHART_FONT_FAMILY, fontSize: CHART_FONT_SIZES.axis },
    },
    series: [
      {
        type: 'custom',
        name: 'interval',
        silent: true,
        z: 2,
        encode: { x: [1, 2], y: 0 },
        data: rows.map((r, i) => [i, r.low, r.high]),
        renderItem: (params: { dataIndex: number }, api: CustomSeriesRenderItemAPI): CustomSeriesRenderItemReturn => {
          const row = rows[params.dataIndex]!;
          const [xLow, y] = api.coord([row.low, params.dataIndex]) as [number, number];
          const [xHigh] = api.coord([row.high, params.dataIndex]) as [number, number];
          const cap = Math.min(8, ((api.size!([0, 1]) as number[])[1] ?? 16) / 4);
          const stroke = { stroke: colorOf(row), lineWidth: 2 };
          return {
            type: 'group',
            children: [
              { type: 'line', shape: { x1: xLow, y1: y, x2: xHigh, y2: y }, style: stroke },
              { type: 'line', shape: { x1: xLow, y1: y - cap, x2: xLow, y2: y + cap }, style: stroke },
              { type: 'line', shape: { x1: xHigh, y1: y - cap, x2: xHigh, y2: y + cap }, style: stroke },
            ],
          };
        },
      },
      {
        type: 'scatter',
        name: 'estimate',
        z: 3,
        symbolSize: 10,
        data: rows.map((r, i) => ({ value: [r.estimate, i], itemStyle: { color: colorOf(r) } })),
        label: {
          show: true,
          // Above the dot, clear of its interval line.
          position: 'top',
          distance: 6,
          fontFamily: CHART_FONT_FAMILY,
          fontSize: CHART_FONT_SIZES.label,
          color: CHART_COLORS.text,
          formatter: (p: { dataIndex: number }) => {
            const r = rows[p.dataIndex]!;
            return `${format(r.estimate)} [${format(r.low)}, ${format(r.high)}]`;
          },
        },
        markLine: {
          silent: true,
          symbol: 'none',
          label: { show: false },
          lineStyle: { color: CHART_COLORS.zero, type: 'dashed', width: 1.5 },
          data: [{ xAxis: 0 }],
        },
      },
    ],
  };
}
