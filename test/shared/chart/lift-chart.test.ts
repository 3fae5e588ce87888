/**
 * The lift forest plot renders: the title, every whole row label, each estimate with its interval written as signed
 * percentages, the 0 line, and the dots and interval lines in their verdict's colour in the PNG.
 */
import { describe, expect, it } from 'vitest';
import { buildLiftChart } from '../../../lib/shared/chart/build-lift-chart.ts';
import { CHART_COLORS } from '../../../lib/shared/chart/chart-theme.ts';
import { renderChartPng, renderChartSvg } from '../../../lib/shared/chart/render-chart.ts';
import { countColor, decodePng, rgb, svgTexts } from './support/chart-svg.ts';

function option() {
  return buildLiftChart({
    title: 'exp-1: relative lift',
    subtitle: 'latest analysis, fixed 95% interval',
    percent: true,
    rows: [
      { label: 'accepted (treatment-with-a-long-arm-name)', estimate: 0.12, low: 0.03, high: 0.2, verdict: 'better' },
      { label: 'latency_ms_per_turn', estimate: -0.05, low: -0.12, high: 0.01, verdict: 'flat' },
      { label: 'cost', estimate: -0.2, low: -0.3, high: -0.1, verdict: 'worse' },
      { label: 'no change', estimate: 0, low: -0.02, high: 0.02 },
    ],
  });
}

describe('buildLiftChart', () => {
  it('writes the title, every row label whole and each estimate with its interval', () => {
    const svg = renderChartSvg(option());
    const texts = svgTexts(svg);
    expect(texts).toEqual(
      expect.arrayContaining([
        'exp-1: relative lift',
        'latest analysis, fixed 95% interval',
        'accepted (treatment-with-a-long-arm-name)',
        'latency_ms_per_turn',
        'cost',
        'no change',
        '+12% [+3%, +20%]',
        '-5% [-12%, +1%]',
        '-20% [-30%, -10%]',
        '0% [-2%, +2%]',
      ]),
    );
    // The 0 line: a dashed mark line.
    expect(svg).toMatch(/stroke-dasharray/);
  });

  it('paints better green and worse red in the PNG', async () => {
    const png = decodePng(await renderChartPng(option()));
    expect([png.width, png.height]).toEqual([900, 500]);
    expect(countColor(png, rgb(CHART_COLORS.better), 10)).toBeGreaterThan(100);
    expect(countColor(png, rgb(CHART_COLORS.worse), 10)).toBeGreaterThan(100);
  });
});
