/**
 * The interval bar chart (strict beside lenient with intervals) renders through ECharts' server-side SVG and resvg:
 * the title, every full checkpoint name and every series name are written; a 0 score is a visible sliver with "0%";
 * each error bar stands on its bar's centre; the PNG decodes at the asked size with the bars' colour inside them, and
 * the same option gives the same bytes twice.
 */
import { describe, expect, it } from 'vitest';
import { barCenterOffset, buildIntervalBarChart } from '../../../lib/shared/chart/build-interval-bar-chart.ts';
import { CHART_PALETTE, MIN_BAR_PIXELS } from '../../../lib/shared/chart/chart-theme.ts';
import { renderChartPng, renderChartSvg } from '../../../lib/shared/chart/render-chart.ts';
import { countColor, decodePng, pixel, rgb, svgBars, svgTexts } from './support/chart-svg.ts';

const CHECKPOINTS = ['meta-llama/Llama-3.1-70B-Instruct:R:STEP-200', 'meta-llama/Llama-3.1-70B-Instruct:R:STEP-400', 'coder-7b:step-50'];

function option() {
  return buildIntervalBarChart({
    title: 'Sweep nightly-1 · suite swe-mini',
    subtitle: 'score per checkpoint, 95% interval',
    categories: CHECKPOINTS,
    series: [
      { name: 'strict', values: [{ value: 0, low: 0, high: 0.16 }, { value: 0.42, low: 0.3, high: 0.55 }, null] },
      { name: 'lenient', values: [{ value: 0.25, low: 0.12, high: 0.4 }, { value: 0.61, low: 0.5, high: 0.72 }, { value: 1, low: 0.84, high: 1 }] },
    ],
    yAxis: { name: 'score', percent: true },
  });
}

describe('buildIntervalBarChart', () => {
  it('writes the title, every whole checkpoint name, the series and the values as percentages', () => {
    const texts = svgTexts(renderChartSvg(option()));
    expect(texts).toEqual(expect.arrayContaining(['Sweep nightly-1 · suite swe-mini', 'score per checkpoint, 95% interval', ...CHECKPOINTS, 'strict', 'lenient', 'score']));
    // Values above the bars, rounded: the 0 too; the missing strict score of coder-7b has no label.
    expect(texts).toEqual(expect.arrayContaining(['0%', '42%', '25%', '61%', '100%']));
    expect(texts.join(' ')).not.toContain('..');
    expect(texts).toContain('80%'); // an axis tick formatted as a percentage
  });

  it('draws a 0 as a visible sliver, leaves a null out, and stands each error bar on its bar', () => {
    const svg = renderChartSvg(option());
    const bars = svgBars(svg);
    // 2 strict (the null has none) + 3 lenient.
    expect(bars.filter((b) => b.series === 0).map((b) => b.index)).toEqual([0, 1]);
    expect(bars.filter((b) => b.series === 1).map((b) => b.index)).toEqual([0, 1, 2]);
    const zero = bars.find((b) => b.series === 0 && b.index === 0)!;
    expect(zero.height).toBeGreaterThanOrEqual(MIN_BAR_PIXELS);
    expect(zero.fill).toBe(CHART_PALETTE[0]);
    // Strict left of lenient in a group.
    const s1 = bars.find((b) => b.series === 0 && b.index === 1)!;
    const l1 = bars.find((b) => b.series === 1 && b.index === 1)!;
    expect(s1.x + s1.width).toBeLessThanOrEqual(l1.x);
    expect(l1.height).toBeGreaterThan(s1.height);
    // Every error bar's vertical line (custom series 2 and 3) is at its bar's centre.
    const verticals = [...svg.matchAll(/<path d="M(-?[\d.]+) (-?[\d.]+)L(-?[\d.]+) (-?[\d.]+)"[^>]*ecmeta_series_index="(2|3)"/g)]
      .filter((m) => Math.abs(Number(m[1]) - Number(m[3])) < 0.01)
      .map((m) => Number(m[1]));
    expect(verticals).toHaveLength(bars.length);
    for (const b of bars) expect(verticals.some((x) => Math.abs(x - (b.x + b.width / 2)) < 0.6), `bar ${b.series}/${b.index}`).toBe(true);
  });

  it('centres bars the way ECharts lays them out (the error bars rely on it)', () => {
    expect(barCenterOffset(100, 0, 1)).toBe(0);
    expect(barCenterOffset(100, 0, 2)).toBeCloseTo(-barCenterOffset(100, 1, 2), 9);
    // A wide band caps the bar width, so the pair stays close to the centre.
    expect(Math.abs(barCenterOffset(2000, 0, 2))).toBeLessThan(60);
  });

  it('renders a PNG of the asked size with the bars in their colours, the same bytes twice', async () => {
    const size = { width: 960, height: 540 };
    const bytes = await renderChartPng(option(), size);
    const png = decodePng(bytes);
    expect([png.width, png.height]).toEqual([960, 540]);
    const bars = svgBars(renderChartSvg(option(), size));
    for (const b of bars.filter((x) => x.height > 8)) {
      // Inside the bar, off its centre line (where the error bar is).
      expect(pixel(png, b.x + 3, b.y + b.height - 3), `bar ${b.series}/${b.index}`).toEqual(rgb(b.fill));
    }
    // The zero sliver is painted too.
    const zero = bars.find((b) => b.series === 0 && b.index === 0)!;
    expect(pixel(png, zero.x + 3, zero.y + zero.height / 2)).toEqual(rgb(CHART_PALETTE[0]));
    // Text was drawn: dark pixels exist, and the corner is white.
    expect(countColor(png, [33, 37, 41], 40)).toBeGreaterThan(500);
    expect(pixel(png, png.width - 2, png.height - 2)).toEqual([255, 255, 255]);
    const again = await renderChartPng(option(), size);
    expect(Buffer.from(again).equals(Buffer.from(bytes))).toBe(true);
  });
});
