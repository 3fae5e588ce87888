/**
 * The PNG of a run's curves decodes (pngjs), has one panel per metric (loss, each term, the KL on the spans, the
 * locality KL, the mismatch, tokens/s) in reading order, and each panel's plot holds the curve's pixels: not blank.
 */
import { PNG } from 'pngjs';
import { CURVE_MAX_POINTS } from '../../lib/training/runs/read-training-curves.ts';
import { describe, expect, it } from 'vitest';
import { CURVE_COLORS, curvePanels, renderTrainingCurves, TOKENS_PER_SECOND, type CurvePanel } from '../../lib/training/render-training-curves.ts';
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

/** Pixels inside the plot (axes excluded) that are the curve's colour. */
function curvePixels(png: PNG, p: CurvePanel): number {
  let n = 0;
  for (let y = p.top; y < p.bottom; y++) {
    for (let x = p.left + 1; x <= p.right; x++) {
      const i = (y * png.width + x) * 4;
      if (png.data[i] === CURVE_COLORS.line[0] && png.data[i + 1] === CURVE_COLORS.line[1] && png.data[i + 2] === CURVE_COLORS.line[2]) n++;
    }
  }
  return n;
}

describe('renderTrainingCurves', () => {
  it('draws one non-blank panel per metric, known metrics first, tokens/s last', () => {
    const metrics = lines(30);
    const layout = curvePanels(metrics);
    expect(layout.panels.map((p) => p.metric)).toEqual(['loss', 'outcomeLoss', 'decisionLoss', 'terms.teacherChoice', 'klSpans', 'localityKl', 'mismatch', TOKENS_PER_SECOND]);
    const png = PNG.sync.read(renderTrainingCurves('run-1', metrics));
    expect([png.width, png.height]).toEqual([layout.width, layout.height]);
    for (const p of layout.panels) {
      expect(p.points).toHaveLength(30);
      // A curve crosses the plot from the first step to the last: at least one pixel per column, roughly.
      expect(curvePixels(png, p), p.metric).toBeGreaterThan(p.right - p.left);
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

  it('draws a run of 300,000 steps: at most 2,000 points per panel, the first and last step kept, no stack overflow', () => {
    const many = Array.from({ length: 300_000 }, (_, step) => ({ step, at: '2026-12-03T10:00:00Z', loss: 1 / (step + 1) }));
    const layout = curvePanels(many);
    const loss = layout.panels.find((p) => p.metric === 'loss')!;
    expect(loss.points).toHaveLength(CURVE_MAX_POINTS);
    expect([loss.points[0]![0], loss.points.at(-1)![0]]).toEqual([0, 299_999]);
    expect([loss.min, loss.max]).toEqual([1 / 300_000, 1]);
    expect(PNG.sync.read(renderTrainingCurves('long', many)).width).toBe(layout.width);
  });

  it('draws a single step as a dot, and a run with no steps as a titled empty image', () => {
    const one = lines(1);
    const layout = curvePanels(one);
    const png = PNG.sync.read(renderTrainingCurves('run-1', one));
    for (const p of layout.panels) expect(curvePixels(png, p), p.metric).toBeGreaterThan(0);
    const empty = PNG.sync.read(renderTrainingCurves('run-0', []));
    expect(curvePanels([]).panels).toEqual([]);
    // The title is drawn: some text-coloured pixel exists.
    let text = 0;
    for (let i = 0; i < empty.data.length; i += 4) if (empty.data[i] === CURVE_COLORS.text[0] && empty.data[i + 1] === CURVE_COLORS.text[1]) text++;
    expect(text).toBeGreaterThan(0);
  });
});
