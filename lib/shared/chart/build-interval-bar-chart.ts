/**
 * Bars with intervals: one group per category (checkpoint, suite), one bar per series (strict beside lenient), each
 * with its interval (a Wilson or bootstrap 95% one) as an error bar and its value written above it. A 0 stays visible
 * (a sliver of a bar and its "0%"); a null is a gap. Category names are written whole, rotated when they do not fit.
 * Browser-safe.
 */
import type { CustomSeriesRenderItemAPI, CustomSeriesRenderItemParams, CustomSeriesRenderItemReturn, EChartsOption } from 'echarts';
import {
  categoryBarFrame,
  CATEGORY_PLOT_WIDTH,
  CHART_COLORS,
  CHART_FONT_FAMILY,
  CHART_FONT_SIZES,
  CHART_PALETTE,
  formatNumber,
  formatPercent,
  MIN_BAR_PIXELS,
  valueAxisOption,
} from './chart-theme.ts';

export interface IntervalValue {
  value: number;
  low?: number;
  high?: number;
}

export interface IntervalBarChartInput {
  title: string;
  subtitle?: string;
  categories: string[];
  /** One value per category, null where there is none. `color` overrides the palette's. */
  series: Array<{ name: string; values: Array<IntervalValue | null>; color?: string }>;
  yAxis?: { name?: string; percent?: boolean; min?: number; max?: number };
}

/** Of the category's band, the share left between groups; and the gap between bars of a group, in bar widths. */
const CATEGORY_GAP = 0.3;
const BAR_GAP = 0.15;
/** The widest a bar gets (a few categories on a wide chart would otherwise draw slabs). */
const BAR_MAX_WIDTH = 72;
/** Below this many pixels a bar, value labels would overlap: leave them to the tooltip. */
const MIN_LABELLED_BAR = 30;

/**
 * Where bar `index` of `count` sits in a category band of `band` pixels: its centre's offset from the band's centre
 * (the bar layout ECharts uses for barCategoryGap and barGap given as fractions, and barMaxWidth).
 */
export function barCenterOffset(band: number, index: number, count: number): number {
  const width = Math.min(BAR_MAX_WIDTH, (band * (1 - CATEGORY_GAP)) / (count + (count - 1) * BAR_GAP));
  const total = count * width + (count - 1) * BAR_GAP * width;
  return -total / 2 + index * width * (1 + BAR_GAP) + width / 2;
}

/**
 * The ECharts option of an interval bar chart.
 *
 * @example
 * buildIntervalBarChart({
 *   title: 'Sweep nightly-1', categories: ['coder-7b:step-100', 'coder-7b:step-200'],
 *   series: [{ name: 'strict', values: [{ value: 0.4, low: 0.3, high: 0.5 }, null] }], yAxis: { percent: true },
 * });
 */
export function buildIntervalBarChart(input: IntervalBarChartInput): EChartsOption {
  const percent = input.yAxis?.percent ?? false;
  const format = (v: number) => (percent ? formatPercent(v) : formatNumber(v));
  const count = Math.max(1, input.series.length);
  const labelled = CATEGORY_PLOT_WIDTH / Math.max(1, input.categories.length * count) >= MIN_LABELLED_BAR;
  const colorOf = (i: number) => input.series[i]?.color ?? CHART_PALETTE[i % CHART_PALETTE.length]!;

  const bars = input.series.map((s, i) => ({
    type: 'bar' as const,
    name: s.name,
    data: input.categories.map((_, c) => {
      const v = s.values[c];
      return v ? v.value : null;
    }),
    itemStyle: { color: colorOf(i) },
    barGap: `${BAR_GAP * 100}%`,
    barCategoryGap: `${CATEGORY_GAP * 100}%`,
    barMaxWidth: BAR_MAX_WIDTH,
    // A 0 is a sliver, not nothing.
    barMinHeight: MIN_BAR_PIXELS,
    emphasis: { disabled: true },
  }));

  // Error bars and value labels: one custom series per bar series, drawn over the bars at the same offsets.
  const intervals = input.series.map((s, i) => ({
    type: 'custom' as const,
    name: `${s.name} interval`,
    silent: true,
    z: 3,
    encode: { x: 0, y: [1, 2, 3] },
    data: input.categories.flatMap((_, c) => {
      const v = s.values[c];
      return v ? [[c, v.value, v.low ?? v.value, v.high ?? v.value, v.low === undefined || v.high === undefined ? 0 : 1]] : [];
    }),
    renderItem: (_params: CustomSeriesRenderItemParams, api: CustomSeriesRenderItemAPI): CustomSeriesRenderItemReturn => {
      const c = Number(api.value(0));
      const value = Number(api.value(1));
      const hasInterval = Number(api.value(4)) === 1;
      const band = (api.size!([1, 0]) as number[])[0]!;
      const cx = api.coord([c, 0])[0]! + barCenterOffset(band, i, count);
      const yValue = api.coord([c, value])[1]!;
      const yLow = api.coord([c, Number(api.value(2))])[1]!;
      const yHigh = api.coord([c, Number(api.value(3))])[1]!;
      const cap = Math.max(3, Math.min(8, band / count / 5));
      const children: NonNullable<Extract<CustomSeriesRenderItemReturn, { type: 'group' }>['children']> = [];
      if (hasInterval) {
        const stroke = { stroke: CHART_COLORS.interval, lineWidth: 1.5 };
        children.push(
          { type: 'line', shape: { x1: cx, y1: yLow, x2: cx, y2: yHigh }, style: stroke },
          { type: 'line', shape: { x1: cx - cap, y1: yHigh, x2: cx + cap, y2: yHigh }, style: stroke },
          { type: 'line', shape: { x1: cx - cap, y1: yLow, x2: cx + cap, y2: yLow }, style: stroke },
        );
      }
      if (labelled) {
        // Above the interval's top, or above the bar (and its minimal sliver for a 0).
        const top = Math.min(hasInterval ? yHigh : yValue, api.coord([c, 0])[1]! - MIN_BAR_PIXELS) - 3;
        children.push({
          type: 'text',
          x: cx,
          y: top,
          style: {
            text: format(value),
            align: 'center',
            verticalAlign: 'bottom',
            fill: CHART_COLORS.text,
            fontFamily: CHART_FONT_FAMILY,
            fontSize: CHART_FONT_SIZES.label,
          },
        });
      }
      return { type: 'group', children };
    },
  }));

  return {
    ...categoryBarFrame(input),
    yAxis: {
      ...valueAxisOption(input.yAxis?.name, 44, (v) => format(v)),
      min: input.yAxis?.min ?? (percent ? 0 : undefined),
      max: input.yAxis?.max ?? (percent ? 1 : undefined),
    },
    series: [...bars, ...intervals],
  };
}
