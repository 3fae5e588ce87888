/**
 * The line chart (training curves, runs compared, anything over time) renders through ECharts' server-side SVG and
 * resvg: title, axis names and every series name written; lines painted in their colours; a band behind its line; a
 * series of one point shows as a dot; a log axis leaves out what it cannot place; the same bytes twice.
 */
import { describe, expect, it } from 'vitest';
import { buildLineChart } from '../../../lib/shared/chart/build-line-chart.ts';
import { CHART_PALETTE } from '../../../lib/shared/chart/chart-theme.ts';
import { renderChartPng, renderChartSvg } from '../../../lib/shared/chart/render-chart.ts';
import { countColor, decodePng, rgb, svgTexts } from './support/chart-svg.ts';

const steps = (n: number, f: (i: number) => number) => Array.from({ length: n }, (_, i): [number, number] => [i * 10, f(i)]);

function option() {
  return buildLineChart({
    title: 'run-a against run-b: loss',
    subtitle: 'steps 0–990',
    x: { name: 'step', type: 'value' },
    y: { name: 'loss' },
    series: [
      { name: 'run-a (coder-7b-instruct:lora-r16)', points: steps(100, (i) => 2 / (1 + i / 10)) },
      { name: 'run-b', points: steps(100, (i) => 1.5 / (1 + i / 20)), band: steps(100, (i) => 1.5 / (1 + i / 20)).map(([x, y]): [number, number, number] => [x, y - 0.1, y + 0.1]) },
      { name: 'single', points: [[500, 1]] },
    ],
  });
}

describe('buildLineChart', () => {
  it('writes the title, the axis names and every series name; a one-point series is a dot', () => {
    const svg = renderChartSvg(option());
    expect(svgTexts(svg)).toEqual(expect.arrayContaining(['run-a against run-b: loss', 'steps 0–990', 'step', 'loss', 'run-a (coder-7b-instruct:lora-r16)', 'run-b', 'single']));
    // The one-point series (index 2 of the lines, after the one band) is drawn as a symbol.
    expect(svg).toMatch(/ecmeta_series_index="3" ecmeta_data_index="0" ecmeta_ssr_type="chart"/);
  });

  it('paints each line in its colour over a washed band, the same bytes twice', async () => {
    const bytes = await renderChartPng(option(), { width: 800, height: 450 });
    const png = decodePng(bytes);
    expect([png.width, png.height]).toEqual([800, 450]);
    // Long curves: hundreds of pixels in each line's colour.
    expect(countColor(png, rgb(CHART_PALETTE[0]), 8)).toBeGreaterThan(300);
    expect(countColor(png, rgb(CHART_PALETTE[1]), 8)).toBeGreaterThan(300);
    // The band: CHART_PALETTE[1] at 22% over white.
    const [r, g, b] = rgb(CHART_PALETTE[1]);
    const washed: [number, number, number] = [r, g, b].map((c) => Math.round(255 + (c - 255) * 0.22)) as [number, number, number];
    expect(countColor(png, washed, 6)).toBeGreaterThan(1000);
    expect(Buffer.from(await renderChartPng(option(), { width: 800, height: 450 })).equals(Buffer.from(bytes))).toBe(true);
  });

  it('formats a percent axis, plots a time axis, and leaves non-positive values off a log axis', () => {
    const day = Date.UTC(2026, 11, 1);
    const pct = renderChartSvg(buildLineChart({ title: 'share', x: { type: 'time' }, y: { percent: true }, series: [{ name: 'timeouts', points: [[day, 0.1], [day + 86_400_000, 0.35]] }] }));
    expect(svgTexts(pct).some((t) => /^\d+%$/.test(t))).toBe(true);
    const log = buildLineChart({ title: 'log', x: { type: 'value' }, y: { log: true }, series: [{ name: 'kl', points: [[0, 0], [1, 0.1], [2, 0.01], [3, Number.NaN]] }] });
    const data = (log.series as Array<{ name: string; data: unknown[] }>).find((s) => s.name === 'kl')!.data;
    expect(data).toEqual([[1, 0.1], [2, 0.01]]);
    expect(svgTexts(renderChartSvg(log))).toContain('kl');
  });
});
