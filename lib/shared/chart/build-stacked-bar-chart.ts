/**
 * Stacked bars: one bar per category (a compute category, a run, a day), one segment per series (GPU-hours by
 * instance kind, cost by category...), the total written above each bar. Browser-safe.
 */
import type { EChartsOption } from 'echarts';
import {
  categoryBarFrame,
  CHART_COLORS,
  CHART_FONT_FAMILY,
  CHART_FONT_SIZES,
  CHART_PALETTE,
  formatNumber,
  MIN_BAR_PIXELS,
  valueAxisOption,
} from './chart-theme.ts';

export interface StackedBarChartInput {
  title: string;
  subtitle?: string;
  categories: string[];
  /** One value per category; `color` overrides the palette's. */
  series: Array<{ name: string; values: number[]; color?: string }>;
  yAxis?: { name?: string };
}

/**
 * The ECharts option of a stacked bar chart.
 *
 * @example
 * buildStackedBarChart({ title: 'GPU-hours by category', categories: ['training', 'evals'],
 *   series: [{ name: 'gpu-hours', values: [12.5, 3] }], yAxis: { name: 'hours' } });
 */
export function buildStackedBarChart(input: StackedBarChartInput): EChartsOption {
  const totals = input.categories.map((_, c) => input.series.reduce((sum, s) => sum + (Number.isFinite(s.values[c]) ? s.values[c]! : 0), 0));
  const last = input.series.length - 1;
  return {
    ...categoryBarFrame(input),
    yAxis: valueAxisOption(input.yAxis?.name, 48, (v) => formatNumber(v)),
    series: input.series.map((s, i) => ({
      type: 'bar' as const,
      name: s.name,
      stack: 'total',
      barCategoryGap: '35%',
      color: s.color ?? CHART_PALETTE[i % CHART_PALETTE.length]!,
      data: input.categories.map((_, c) => (Number.isFinite(s.values[c]) ? s.values[c]! : 0)),
      emphasis: { disabled: true },
      // The bottom segment keeps a 0 total visible; the top one writes the total.
      ...(i === 0 ? { barMinHeight: MIN_BAR_PIXELS } : {}),
      ...(i === last
        ? {
            label: {
              show: true,
              position: 'top' as const,
              fontFamily: CHART_FONT_FAMILY,
              fontSize: CHART_FONT_SIZES.label,
              color: CHART_COLORS.text,
              formatter: (p: { dataIndex: number }) => formatNumber(totals[p.dataIndex] ?? 0),
            },
          }
        : {}),
    })),
  };
}
