/**
 * The one look of every Flywheel chart, in the console and in the PNGs of the CLI, the API and Slack: the palette,
 * the font (DejaVu Sans, which the PNG renderer loads from `dejavu-fonts-ttf` and a browser falls back from to its
 * sans-serif) and the sizes. Browser-safe: plain values and small formatters, no Node import.
 */

/** Series colours in order: strict and lenient take the first two, so they read the same in every chart. */
export const CHART_PALETTE = ['#1971c2', '#e67700', '#2f9e44', '#c92a2a', '#7048e8', '#0c8599', '#d6336c', '#5c940d'] as const;

export const CHART_COLORS = {
  background: '#ffffff',
  text: '#212529',
  subtext: '#495057',
  axis: '#495057',
  grid: '#dee2e6',
  zero: '#868e96',
  interval: '#212529',
  better: '#2f9e44',
  worse: '#c92a2a',
  flat: '#495057',
} as const;

export const CHART_FONT_FAMILY = 'DejaVu Sans, sans-serif';

export const CHART_FONT_SIZES = { title: 16, subtitle: 12, axis: 12, label: 11, legend: 12 } as const;

/** The size a chart is drawn at when nobody says otherwise (the PNG renderer's default too). */
export const DEFAULT_CHART_SIZE = { width: 900, height: 500 } as const;

/** The smallest bar drawn, in pixels: a 0 score stays visible as a sliver with its label above it. */
export const MIN_BAR_PIXELS = 3;

/**
 * A number for a person: 3 significant digits, no float noise, exponent form only when very large or small.
 *
 * @example
 * formatNumber(0.123456) // '0.123'
 * formatNumber(1234567)  // '1.23e+6'
 */
export function formatNumber(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e6 || a < 1e-3) return v.toExponential(2).replace(/\.?0+e/, 'e');
  if (a >= 1000) return String(Math.round(v));
  return String(Number(v.toPrecision(3)));
}

/**
 * A fraction as a percentage: whole percents, one decimal below 10%.
 *
 * @example
 * formatPercent(0.5)    // '50%'
 * formatPercent(0.0375) // '3.8%'
 */
export function formatPercent(v: number, signed = false): string {
  if (!Number.isFinite(v)) return String(v);
  const p = v * 100;
  const digits = Math.abs(p) < 10 && p !== 0 ? 1 : 0;
  const text = `${Number(p.toFixed(digits))}%`;
  return signed && p > 0 ? `+${text}` : text;
}

/** The parts of an option every chart shares: no animation (a PNG and a screenshot are one frame), the font, white. */
export function baseOption(): { animation: false; backgroundColor: string; color: string[]; textStyle: { fontFamily: string; fontSize: number; color: string } } {
  return {
    animation: false,
    backgroundColor: CHART_COLORS.background,
    color: [...CHART_PALETTE],
    textStyle: { fontFamily: CHART_FONT_FAMILY, fontSize: CHART_FONT_SIZES.axis, color: CHART_COLORS.text },
  };
}

/** The title block: the title and, when given, a subtitle under it. */
export function titleOption(title: string, subtitle?: string) {
  return {
    text: title,
    left: 16,
    top: 10,
    textStyle: { fontFamily: CHART_FONT_FAMILY, fontSize: CHART_FONT_SIZES.title, fontWeight: 'bold' as const, color: CHART_COLORS.text },
    ...(subtitle ? { subtext: subtitle, subtextStyle: { fontFamily: CHART_FONT_FAMILY, fontSize: CHART_FONT_SIZES.subtitle, color: CHART_COLORS.subtext } } : {}),
  };
}

/** The legend, top right, under the title row. */
export function legendOption() {
  return {
    top: 12,
    right: 16,
    textStyle: { fontFamily: CHART_FONT_FAMILY, fontSize: CHART_FONT_SIZES.legend, color: CHART_COLORS.text },
  };
}

/** Where the plot goes: below the title (and subtitle), and shrunk so axis labels and names are never cut. */
export function gridOption(hasSubtitle: boolean, bottom = 16) {
  return { left: 16, right: 32, top: hasSubtitle ? 76 : 56, bottom, outerBoundsMode: 'same' as const, outerBoundsContain: 'all' as const };
}

/**
 * How category labels fit: horizontal when the longest fits its slot, else rotated (30° or, when very long, 60°).
 * Labels are never cut: the grid grows to contain them.
 *
 * @example
 * categoryLabelRotation(['coder-7b:step-100', 'coder-7b:step-200'], 800) // 0
 */
export function categoryLabelRotation(categories: readonly string[], plotWidth: number): number {
  const longest = categories.reduce((m, c) => Math.max(m, c.length), 0);
  // DejaVu Sans at 12 px averages about 7 px a character.
  const needed = longest * 7 + 8;
  const slot = plotWidth / Math.max(1, categories.length);
  if (needed <= slot) return 0;
  return needed <= slot * 2.5 ? 30 : 60;
}

/** The plot's width in a bar chart over categories: the chart's, less the value axis and the margins. */
export const CATEGORY_PLOT_WIDTH = DEFAULT_CHART_SIZE.width - 120;

/**
 * What the bar charts over categories share: the base, title, legend (one entry per series), the axis tooltip, the
 * grid, and the category axis with every name written whole (rotated when they do not fit, `categoryLabelRotation`).
 *
 * @example
 * ({ ...categoryBarFrame({ title: 'GPU-hours', categories: ['training'], series: [{ name: 'gpu-hours' }] }), yAxis, series })
 */
export function categoryBarFrame(input: { title: string; subtitle?: string | undefined; categories: string[]; series: ReadonlyArray<{ name: string }> }) {
  return {
    ...baseOption(),
    title: titleOption(input.title, input.subtitle),
    legend: { ...legendOption(), data: input.series.map((s) => s.name) },
    tooltip: { trigger: 'axis' as const, axisPointer: { type: 'shadow' as const } },
    grid: gridOption(Boolean(input.subtitle)),
    xAxis: {
      type: 'category' as const,
      data: input.categories,
      axisTick: { alignWithLabel: true },
      axisLine: { lineStyle: { color: CHART_COLORS.axis } },
      axisLabel: {
        interval: 0,
        rotate: categoryLabelRotation(input.categories, CATEGORY_PLOT_WIDTH),
        color: CHART_COLORS.text,
        fontFamily: CHART_FONT_FAMILY,
        fontSize: CHART_FONT_SIZES.axis,
        hideOverlap: false,
      },
    },
  };
}

/** The value axis of a bar chart: its name (when given) along it, grid lines, and labels written by `format`. */
export function valueAxisOption(name: string | undefined, nameGap: number, format: (v: number) => string) {
  return {
    type: 'value' as const,
    ...(name ? { name, nameLocation: 'middle' as const, nameGap } : {}),
    splitLine: { lineStyle: { color: CHART_COLORS.grid } },
    axisLabel: { formatter: format, color: CHART_COLORS.text, fontFamily: CHART_FONT_FAMILY },
  };
}
