/**
 * The PNG of a run's curves decodes (pngjs), has one panel per metric (loss, each term, the KL on the spans, the
 * locality KL, the mismatch, tokens/s) in reading order, two across, and each panel holds its curve's pixels and its
 * metric's name: not blank.
 */
import type { PNG } from 'pngjs';
import { CURVE_MAX_POINTS } from '../../lib/training/runs/read-training-curves.ts';
import { describe, expect, it } from 'vitest';
import { CHART_PALETTE } from '../../lib/shared/chart/chart-theme.ts';
import { renderChartSvg } from '../../lib/shared/chart/render-chart.ts';
import { CURVE_CELL, curvePanels, renderTrainingCurves, TOKENS_PER_SECOND, trainingCurvesOptions } from '../../lib/training/render-training-curves.ts';
import { decodePng, rgb, svgTexts } from '../shared/chart/support/chart-svg.ts';
import type { TrainingMetricsLine } from '../../lib/training/schemas.ts';

function lines(n: number): TrainingMetricsLine[] {
  return Array.from({ length: n }, (_, step) => ({
    step,
    at: new Date(Date.UTC(2026, 0, 1, 0, 0, step)).toISOString(),
    loss: 2 / (step + 1),
    tokens: 1000,
    stepSeconds: 0.5 + step * 0.01,
    outcomeLoss: 1 / (step + 1),
    decisionLoss: 1 - step / n,
    klSpans: step * 0.01,
    localityKl: 0.001 * step,
    mismatch: 0.02,
    terms: { teacherChoice: 0.3 - step * 0.001 },
    note: 'not a number',
  }));
}

/** Pixels of the line colour inside panel `i` (two across, CURVE_CELL each). */
function curvePixels(png: PNG, i: number): number {
  const [r, g, b] = rgb(CHART_PALETTE[0]);
  const left = (i % 2) * CURVE_CELL.width;
  const top = Math.floor(i / 2) * CURVE_CELL.height;
  let n = 0;
  for (let y = top; y < top + CURVE_CELL.height; y++) {
    for (let x = left; x < left + CURVE_CELL.width; x++) {
      const k = (y * png.width + x) * 4;
      if (Math.abs(png.data[k]! - r) <= 8 && Math.abs(png.data[k + 1]! - g) <= 8 && Math.abs(png.data[k + 2]! - b) <= 8) n++;
    }
  }
  return n;
}

describe('renderTrainingCurves', () => {
  it('draws one non-blank panel per metric, known metrics first, tokens/s last', async () => {
    const metrics = lines(30);
    const layout = curvePanels(metrics);
    expect(layout.panels.map((p) => p.metric)).toEqual(['loss', 'outcomeLoss', 'decisionLoss', 'terms.teacherChoice', 'klSpans', 'localityKl', 'mismatch', TOKENS_PER_SECOND]);
    expect([layout.width, layout.height]).toEqual([2 * CURVE_CELL.width, 4 * CURVE_CELL.height]);
    const png = decodePng(await renderTrainingCurves('run-1', metrics));
    expect([png.width, png.height]).toEqual([layout.width, layout.height]);
    const options = trainingCurvesOptions('run-1', metrics);
    for (const [i, p] of layout.panels.entries()) {
      expect(p.points).toHaveLength(30);
      // A curve crosses the plot from the first step to the last: at least one pixel per column of a 450 px panel, roughly.
      expect(curvePixels(png, i), p.metric).toBeGreaterThan(300);
      expect(svgTexts(renderChartSvg(options[i]!, CURVE_CELL)), p.metric).toEqual(expect.arrayContaining([p.metric, 'run run-1 · steps 0–29', 'step']));
    }
    // The throughput panel is derived from tokens / stepSeconds.
    const tps = layout.panels.find((p) => p.metric === TOKENS_PER_SECOND)!;
    expect(tps.max).toBeCloseTo(2000);
    expect(tps.min).toBeCloseTo(1000 / (0.5 + 29 * 0.01));
  });

  it('keeps the last line of a step written twice (a resumed run redoing steps)', () => {
    const first = lines(5);
    const redone = { ...first[3]!, loss: 99 };
    const layout = curvePanels([...first, redone]);
    const loss = layout.panels.find((p) => p.metric === 'loss')!;
    expect(loss.points.map((pt) => pt[0])).toEqual([0, 1, 2, 3, 4]);
    expect(loss.points[3]![1]).toBe(99);
  });

  it('draws a run of 300,000 steps: at most 2,000 points per panel, the first and last step kept, no stack overflow', async () => {
    const many = Array.from({ length: 300_000 }, (_, step) => ({ step, at: '2026-12-03T10:00:00Z', loss: 1 / (step + 1) }));
    const layout = curvePanels(many);
    const loss = layout.panels.find((p) => p.metric === 'loss')!;
    expect(loss.points).toHaveLength(CURVE_MAX_POINTS);
    expect([loss.points[0]![0], loss.points.at(-1)![0]]).toEqual([0, 299_999]);
    expect([loss.min, loss.max]).toEqual([1 / 300_000, 1]);
    expect(decodePng(await renderTrainingCurves('long', many)).width).toBe(layout.width);
  });

  it('draws a single step as a dot, and a run with no steps as a titled empty chart', async () => {
    const one = lines(1);
    const layout = curvePanels(one);
    const png = decodePng(await renderTrainingCurves('run-1', one));
    for (const [i, p] of layout.panels.entries()) expect(curvePixels(png, i), p.metric).toBeGreaterThan(0);
    const empty = decodePng(await renderTrainingCurves('run-0', []));
    expect(curvePanels([]).panels).toEqual([]);
    expect([empty.width, empty.height]).toEqual([CURVE_CELL.width, CURVE_CELL.height]);
    expect(svgTexts(renderChartSvg(trainingCurvesOptions('run-0', [])[0]!, CURVE_CELL))).toContain('run run-0: no steps yet');
  });
});
