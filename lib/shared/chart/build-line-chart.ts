/**
 * Lines against a value or time axis: training curves, two runs compared, failure modes over time, compute over time,
 * a lift over time. A series may carry a band (its interval at each x), drawn as a washed area behind its line.
 * A series of one point shows as a dot. Browser-safe.
 */
import type { CustomSeriesRenderItemAPI, CustomSeriesRenderItemReturn, EChartsOption } from 'echarts';
import {
  baseOption,
  CHART_COLORS,
  CHART_FONT_FAMILY,
  CHART_PALETTE,
  formatNumber,
  formatPercent,
  gridOption,
  legendOption,
  titleOption,
} from './chart-theme.ts';

export interface LineChartInput {
  title: string;
  subtitle?: string;
  x: { name?: string; type: 'value' | 'time' };
  y: { name?: string; percent?: boolean; log?: boolean };
  /** Points are [x, y] (x in ms since the epoch on a time axis). `band` is [x, low, high] rows; `color` overrides. */
  series: Array<{ name: string; points: Array<[number, number]>; band?: Array<[number, number, number]>; color?: string }>;
}

/** Up to this many points a line shows its dots. */
const DOTS_UP_TO = 30;

/** A colour washed towards white (`#rrggbb` in, `rgba(...)` out) for a band behind its line. */
function wash(hex: string, alpha = 0.22): string {
  const n = Number.parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
}

/**
 * The ECharts option of a line chart.
 *
 * @example
 * buildLineChart({ title: 'run-1: loss', x: { name: 'step', type: 'value' }, y: { name: 'loss' },
 *   series: [{ name: 'loss', points: [[1, 2.3], [2, 1.9]] }] });
 */
export function buildLineChart(input: LineChartInput): EChartsOption {
  const percent = input.y.percent ?? false;
  const log = input.y.log ?? false;
  const format = (v: number) => (percent ? formatPercent(v) : formatNumber(v));
  const colorOf = (i: number) => input.series[i]?.color ?? CHART_PALETTE[i % CHART_PALETTE.length]!;
  // A log axis has no place for 0 or below: leave such points out rather than fail the chart.
  const keep = (p: readonly number[]) => p.every((v) => Number.isFinite(v)) && (!log || p[1]! > 0);

  const lines = input.series.map((s, i) => {
    const data = s.points.filter(keep).sort((a, b) => a[0] - b[0]);
    return {
      type: 'line' as const,
      name: s.name,
      data,
      color: colorOf(i),
      showSymbol: data.length <= DOTS_UP_TO,
      symbolSize: data.length === 1 ? 8 : 5,
      lineStyle: { width: 2 },
      z: 3,
      emphasis: { disabled: true },
    };
  });
  const bands = input.series.flatMap((s, i) => {
    const rows = (s.band ?? []).filter((r) => r.every((v) => Number.isFinite(v))).sort((a, b) => a[0] - b[0]);
    if (rows.length === 0) return [];
    const color = wash(colorOf(i));
    return [
      {
        type: 'custom' as const,
        name: `${s.name} band`,
        silent: true,
        z: 1,
        encode: { x: 0, y: [1, 2] },
        data: rows,
        // One polygon for the whole band, drawn once (by the first row): upper edge left to right, lower edge back.
        renderItem: (params: { dataIndex: number }, api: CustomSeriesRenderItemAPI): CustomSeriesRenderItemReturn => {
          if (params.dataIndex !== 0) return null;
          const upper = rows.map((r) => api.coord([r[0], r[2]]) as number[]);
          const lower = rows.map((r) => api.coord([r[0], r[1]]) as number[]).reverse();
          if (rows.length === 1) {
            const [x, y1] = upper[0]!;
            const y0 = lower[0]![1]!;
            return { type: 'rect', shape: { x: x! - 3, y: y1!, width: 6, height: Math.max(1, y0 - y1!) }, style: { fill: color } };
          }
          return { type: 'polygon', shape: { points: [...upper, ...lower] }, style: { fill: color } };
        },
      },
    ];
  });

  const axisName = (name?: string) => (name ? { name, nameLocation: 'middle' as const, nameGap: 30 } : {});
  return {
    ...baseOption(),
    title: titleOption(input.title, input.subtitle),
    // One series named in the title needs no legend.
    legend: { ...legendOption(), show: input.series.length > 1 || !input.title.includes(input.series[0]?.name ?? ''), data: input.series.map((s) => s.name) },
    tooltip: { trigger: 'axis' },
    grid: gridOption(Boolean(input.subtitle)),
    xAxis: {
      type: input.x.type,
      ...axisName(input.x.name),
      scale: true,
      axisLine: { lineStyle: { color: CHART_COLORS.axis } },
      splitLine: { show: false },
      axisLabel: {
        color: CHART_COLORS.text,
        fontFamily: CHART_FONT_FAMILY,
        hideOverlap: true,
        ...(input.x.type === 'value' ? { formatter: (v: number) => formatNumber(v) } : {}),
      },
    },
    yAxis: {
      type: log ? 'log' : 'value',
      ...(input.y.name ? { name: input.y.name, nameLocation: 'middle' as const, nameGap: 48 } : {}),
      // A share's axis keeps its 0 (so does a lift's, where 0 means no change); other values zoom to their range.
      scale: !percent,
      splitLine: { lineStyle: { color: CHART_COLORS.grid } },
      axisLabel: { formatter: (v: number) => format(v), color: CHART_COLORS.text, fontFamily: CHART_FONT_FAMILY },
    },
    series: [...bands, ...lines],
  };
}
