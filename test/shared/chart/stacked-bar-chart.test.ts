/**
 * The stacked bar chart (compute per category) renders: the title, every category and series name, each bar's total
 * written above it, a 0 total still visible as a sliver with "0", and the segments in their colours in the PNG.
 */
import { describe, expect, it } from 'vitest';
import { buildStackedBarChart } from '../../../lib/shared/chart/build-stacked-bar-chart.ts';
import { MIN_BAR_PIXELS } from '../../../lib/shared/chart/chart-theme.ts';
import { renderChartPng, renderChartSvg } from '../../../lib/shared/chart/render-chart.ts';
import { decodePng, pixel, rgb, svgBars, svgTexts } from './support/chart-svg.ts';

const CATEGORIES = ['training', 'evaluation sweeps', 'judges', 'failure-mode classification', 'experiments'];

function option() {
  return buildStackedBarChart({
    title: 'Compute by category',
    subtitle: 'December 2026',
    categories: CATEGORIES,
    series: [
      { name: 'GPU-hours', values: [12.5, 3, 0, 1, 0.333333] },
      { name: 'CPU-hours', values: [2, 1, 0, 0.5, 0] },
    ],
    yAxis: { name: 'hours' },
  });
}

describe('buildStackedBarChart', () => {
  it('writes the title, every category and series, and each total rounded', () => {
    const texts = svgTexts(renderChartSvg(option()));
    expect(texts).toEqual(expect.arrayContaining(['Compute by category', 'December 2026', ...CATEGORIES, 'GPU-hours', 'CPU-hours', 'hours', '14.5', '4', '0', '1.5', '0.333']));
  });

  it('keeps a 0 total visible and paints the segments', async () => {
    const svg = renderChartSvg(option());
    const bars = svgBars(svg);
    const zero = bars.find((b) => b.series === 0 && b.index === 2)!;
    expect(zero.height).toBeGreaterThanOrEqual(MIN_BAR_PIXELS);
    const png = decodePng(await renderChartPng(option()));
    for (const b of bars.filter((x) => x.height > 6)) expect(pixel(png, b.x + b.width / 2, b.y + b.height / 2), `${b.series}/${b.index}`).toEqual(rgb(b.fill));
    expect(pixel(png, zero.x + zero.width / 2, zero.y + zero.height / 2)).toEqual(rgb(zero.fill));
  });
});
