/**
 * A metric's lift over time as a PNG: for each treatment arm, the relative lift against the control at each stored
 * analysis, with its interval as a band (the always-valid one when the experiment is sequential, else the fixed
 * 95% one), and the zero line. Drawn with the shared raster (`lib/shared/chart/raster.ts`, as the sweep report and
 * the training curves are): pure JavaScript, nothing fetched at run time.
 *
 * `liftChartLayout` computes where everything goes; `renderLiftChart` draws it. Tests check the PNG against the layout.
 */
import { textWidth } from '../../shared/chart/bitmap-font.ts';
import { Raster, type Rgb } from '../../shared/chart/raster.ts';
import type { ExperimentAnalysis } from '../schemas.ts';

export const LIFT_COLORS = {
  background: [255, 255, 255] as Rgb,
  text: [33, 37, 41] as Rgb,
  axis: [73, 80, 87] as Rgb,
  zero: [160, 160, 160] as Rgb,
  arms: [
    [25, 113, 194],
    [230, 119, 0],
    [47, 158, 68],
    [201, 42, 42],
    [112, 72, 232],
    [12, 133, 153],
    [232, 62, 140],
  ] as Rgb[],
} as const;

/** A band's colour: the arm's, washed towards white. */
export function bandColor(c: Rgb): Rgb {
  return [Math.round(c[0] + (255 - c[0]) * 0.7), Math.round(c[1] + (255 - c[1]) * 0.7), Math.round(c[2] + (255 - c[2]) * 0.7)];
}

const WIDTH = 720;
const HEIGHT = 320;
const M = { left: 70, right: 24, top: 40, bottom: 46 } as const;

export interface LiftPoint {
  at: number;
  lift: number;
  low: number;
  high: number;
}

export interface LiftSeries {
  arm: string;
  color: Rgb;
  points: LiftPoint[];
}

export interface LiftChartLayout {
  width: number;
  height: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
  /** The y range drawn (relative lift), 0 always inside. */
  min: number;
  max: number;
  firstAt: number;
  lastAt: number;
  series: LiftSeries[];
  /** Pixel of a value and of a time. */
  y: (v: number) => number;
  x: (at: number) => number;
}

/**
 * Where everything goes: one series per treatment arm that has a relative lift, points in time order.
 *
 * @example
 * const layout = liftChartLayout('accepted', analyses, true);
 */
export function liftChartLayout(metric: string, analyses: readonly ExperimentAnalysis[], sequential: boolean): LiftChartLayout {
  const ordered = [...analyses].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  const byArm = new Map<string, LiftPoint[]>();
  for (const a of ordered) {
    const m = a.metrics.find((x) => x.metric === metric);
    for (const c of m?.comparisons ?? []) {
      const ci = sequential ? (c.sequentialCi ?? c.ci) : c.ci;
      if (c.relativeLift === null || !ci) continue;
      let points = byArm.get(c.arm);
      if (!points) byArm.set(c.arm, (points = []));
      points.push({ at: Date.parse(a.at), lift: c.relativeLift, low: ci.low, high: ci.high });
    }
  }
  const series = [...byArm.entries()].map(([arm, points], i) => ({ arm, color: LIFT_COLORS.arms[i % LIFT_COLORS.arms.length]!, points }));
  let min = 0;
  let max = 0;
  for (const s of series) {
    for (const p of s.points) {
      if (p.low < min) min = p.low;
      if (p.high > max) max = p.high;
    }
  }
  if (max - min < 1e-6) {
    min -= 0.01;
    max += 0.01;
  }
  const times = series.flatMap((s) => s.points.map((p) => p.at));
  const firstAt = times.length > 0 ? Math.min(...times) : 0;
  const lastAt = times.length > 0 ? Math.max(...times) : 0;
  const left = M.left;
  const right = WIDTH - M.right;
  const top = M.top;
  const bottom = HEIGHT - M.bottom;
  const span = Math.max(1, lastAt - firstAt);
  const y = (v: number) => bottom - ((v - min) / (max - min)) * (bottom - top);
  const x = (at: number) => (lastAt === firstAt ? (left + right) / 2 : left + ((at - firstAt) / span) * (right - left));
  return { width: WIDTH, height: HEIGHT, left, right, top, bottom, min, max, firstAt, lastAt, series, y, x };
}

const pct = (v: number) => `${v >= 0 ? '+' : ''}${Number((v * 100).toPrecision(3))}%`;
const stamp = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');

/**
 * The PNG of a metric's lift over the stored analyses.
 *
 * @example
 * await blobs.put(archiveKeys.liftChart(tenant, 'exp-1', 'accepted'), renderLiftChart('exp-1', 'accepted', analyses, true), { contentType: 'image/png' });
 */
export function renderLiftChart(experimentId: string, metric: string, analyses: readonly ExperimentAnalysis[], sequential: boolean): Buffer {
  const l = liftChartLayout(metric, analyses, sequential);
  const r = new Raster(l.width, l.height, LIFT_COLORS.background);
  const title = `${experimentId}: ${metric} RELATIVE LIFT, ${sequential ? 'ALWAYS-VALID' : 'FIXED 95%'} INTERVAL`;
  r.text(l.left, 12, l.series.length === 0 ? `${experimentId}: ${metric}: NO LIFT YET` : title, LIFT_COLORS.text);
  // Bands first, lines over them.
  for (const s of l.series) {
    const band = bandColor(s.color);
    for (let i = 0; i < s.points.length; i++) {
      const p = s.points[i]!;
      const next = s.points[i + 1];
      const x0 = l.x(p.at);
      if (!next) {
        r.vline(Math.round(x0) - 1, Math.round(l.y(p.high)), Math.round(l.y(p.low)), band, 3);
        continue;
      }
      const x1 = l.x(next.at);
      // Fill the band column by column, its edges interpolated between the two analyses.
      for (let xx = Math.round(x0); xx <= Math.round(x1); xx++) {
        const f = x1 === x0 ? 0 : (xx - x0) / (x1 - x0);
        const hi = p.high + (next.high - p.high) * f;
        const lo = p.low + (next.low - p.low) * f;
        r.vline(xx, Math.round(l.y(hi)), Math.round(l.y(lo)), band);
      }
    }
  }
  r.hline(l.left, l.right, Math.round(l.y(0)), LIFT_COLORS.zero);
  for (const s of l.series) {
    if (s.points.length === 1) r.fillRect(l.x(s.points[0]!.at) - 2, l.y(s.points[0]!.lift) - 2, 5, 5, s.color);
    for (let i = 1; i < s.points.length; i++) {
      const a = s.points[i - 1]!;
      const b = s.points[i]!;
      r.line(l.x(a.at), l.y(a.lift), l.x(b.at), l.y(b.lift), s.color, 2);
    }
  }
  r.vline(l.left, l.top, l.bottom, LIFT_COLORS.axis);
  r.hline(l.left, l.right, l.bottom, LIFT_COLORS.axis);
  for (const v of [l.max, 0, l.min]) {
    const label = pct(v);
    r.text(l.left - 6 - textWidth(label), Math.round(l.y(v)) - 3, label, LIFT_COLORS.text);
  }
  if (l.series.length > 0) {
    r.text(l.left, l.bottom + 6, stamp(l.firstAt), LIFT_COLORS.text);
    const last = stamp(l.lastAt);
    r.text(l.right - textWidth(last), l.bottom + 6, last, LIFT_COLORS.text);
  }
  let lx = l.left;
  for (const s of l.series) {
    r.fillRect(lx, l.bottom + 24, 10, 7, s.color);
    r.text(lx + 14, l.bottom + 24, s.arm, LIFT_COLORS.text);
    lx += 14 + textWidth(s.arm) + 20;
  }
  return r.png();
}
