/**
 * A training run's curves as a PNG: one panel per metric the trainer writes to `metrics.jsonl` (the loss, each loss
 * term, the KL on the decision spans, the locality KL off them, the train–inference log-prob mismatch, the rejected
 * token's probability…) and tokens per second (`tokens / stepSeconds`), each against the step. Drawn with the shared
 * raster (`lib/shared/chart/raster.ts`, the sweep report's too): pure JavaScript, nothing fetched at run time.
 *
 * Which metrics: every finite number of a line but the bookkeeping (`step`, `at`, `tokens`, `stepSeconds`), one level
 * of nested objects flattened (`terms.outcome`), so a term the trainer adds gets its panel without a change here. The
 * known ones come first, in the order people read them.
 *
 * `curvePanels` computes where everything goes; `renderTrainingCurves` draws it. Tests check the PNG against the layout.
 */
import { textWidth } from '../shared/chart/bitmap-font.ts';
import { Raster, type Rgb } from '../shared/chart/raster.ts';
import { CURVE_MAX_POINTS, downsample } from './runs/read-training-curves.ts';
import type { TrainingMetricsLine } from './schemas.ts';

export const CURVE_COLORS = {
  background: [255, 255, 255] as Rgb,
  text: [33, 37, 41] as Rgb,
  axis: [73, 80, 87] as Rgb,
  grid: [222, 226, 230] as Rgb,
  line: [25, 113, 194] as Rgb,
} as const;

/** The derived throughput panel's name. */
export const TOKENS_PER_SECOND = 'tokens/s';

const BOOKKEEPING = new Set(['step', 'at', 'tokens', 'stepSeconds']);
/** Known metrics first, by the start of their name (case-insensitive), in reading order; the rest alphabetically. */
const ORDER = ['loss', 'outcome', 'decision', 'teacher', 'kl', 'spankl', 'locality', 'mismatch', 'offpolicy', 'rejected'];

const PLOT_WIDTH = 360;
const PLOT_HEIGHT = 140;
const COLUMNS = 2;
/** Room for the y labels (left), the title (top) and the x labels (bottom) around each plot. */
const M = { left: 64, right: 24, top: 28, bottom: 22 } as const;
const HEADER = 28;
const CELL_WIDTH = M.left + PLOT_WIDTH + M.right;
const CELL_HEIGHT = M.top + PLOT_HEIGHT + M.bottom;

export interface CurvePanel {
  metric: string;
  /** (step, value) in step order; non-finite values are left out. */
  points: Array<readonly [number, number]>;
  /** The plot area in pixels: [left, right] × [top, bottom]. */
  left: number;
  right: number;
  top: number;
  bottom: number;
  min: number;
  max: number;
}

export interface CurvesLayout {
  width: number;
  height: number;
  panels: CurvePanel[];
  firstStep: number;
  lastStep: number;
}

/** Every finite number of a line by metric name (one level of nesting flattened), plus tokens per second. */
function metricsOf(line: TrainingMetricsLine): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of Object.entries(line)) {
    if (BOOKKEEPING.has(k)) continue;
    if (typeof v === 'number' && Number.isFinite(v)) out.set(k, v);
    else if (v && typeof v === 'object' && !Array.isArray(v)) {
      for (const [k2, v2] of Object.entries(v as Record<string, unknown>)) {
        if (typeof v2 === 'number' && Number.isFinite(v2)) out.set(`${k}.${k2}`, v2);
      }
    }
  }
  if (typeof line.tokens === 'number' && typeof line.stepSeconds === 'number' && line.stepSeconds > 0) out.set(TOKENS_PER_SECOND, line.tokens / line.stepSeconds);
  return out;
}

function rank(metric: string): number {
  if (metric === TOKENS_PER_SECOND) return ORDER.length + 1;
  // A nested term (`terms.teacherChoice`) ranks by its own name.
  const m = metric.slice(metric.lastIndexOf('.') + 1).toLowerCase();
  const i = ORDER.findIndex((prefix) => m.startsWith(prefix));
  return i < 0 ? ORDER.length : i;
}

/**
 * Where each panel goes, and its points. Lines are taken in step order; a step written twice (a resumed run redoing
 * steps after its last saved state) keeps its last line.
 */
export function curvePanels(lines: readonly TrainingMetricsLine[]): CurvesLayout {
  const byStep = new Map<number, TrainingMetricsLine>();
  for (const l of lines) byStep.set(l.step, l);
  // At most CURVE_MAX_POINTS steps drawn (evenly spaced, first and last kept): a panel is 360 px wide.
  const ordered = downsample([...byStep.values()].sort((a, b) => a.step - b.step), CURVE_MAX_POINTS);
  const series = new Map<string, Array<readonly [number, number]>>();
  for (const l of ordered) {
    for (const [metric, value] of metricsOf(l)) {
      let s = series.get(metric);
      if (!s) series.set(metric, (s = []));
      s.push([l.step, value]);
    }
  }
  const names = [...series.keys()].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const firstStep = ordered[0]?.step ?? 0;
  const lastStep = ordered.at(-1)?.step ?? 0;
  const rows = Math.max(1, Math.ceil(names.length / COLUMNS));
  const panels = names.map((metric, i): CurvePanel => {
    const points = series.get(metric)!;
    // A loop, not Math.min(...values): a spread of a long series overflows the call stack.
    let min = Infinity;
    let max = -Infinity;
    for (const [, v] of points) {
      if (v < min) min = v;
      if (v > max) max = v;
    }
    const left = (i % COLUMNS) * CELL_WIDTH + M.left;
    const top = HEADER + Math.floor(i / COLUMNS) * CELL_HEIGHT + M.top;
    return { metric, points, left, right: left + PLOT_WIDTH, top, bottom: top + PLOT_HEIGHT, min, max };
  });
  return { width: COLUMNS * CELL_WIDTH, height: HEADER + rows * CELL_HEIGHT, panels, firstStep, lastStep };
}

/** A short label for an axis value: 3 significant digits, exponent form when very large or small. */
function formatValue(v: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  return a >= 1e5 || a < 1e-3 ? v.toExponential(1) : String(Number(v.toPrecision(3)));
}

/**
 * The PNG of a run's curves.
 *
 * @example
 * await writeFile('curves.png', renderTrainingCurves('run-1', await readTrainingCurves({ blobs }, 'run-1')));
 */
export function renderTrainingCurves(runId: string, lines: readonly TrainingMetricsLine[]): Buffer {
  const layout = curvePanels(lines);
  const r = new Raster(layout.width, layout.height, CURVE_COLORS.background);
  const title = lines.length === 0 ? `RUN ${runId}: NO STEPS YET` : `RUN ${runId}  STEPS ${layout.firstStep}-${layout.lastStep}`;
  r.text(M.left, 10, title, CURVE_COLORS.text);
  const stepSpan = Math.max(1, layout.lastStep - layout.firstStep);
  for (const p of layout.panels) {
    r.text(p.left, p.top - 16, p.metric, CURVE_COLORS.text);
    // A flat series gets a band around its value, so its line sits mid-panel.
    const pad = p.max === p.min ? Math.max(Math.abs(p.max) * 0.1, 1e-6) : 0;
    const lo = p.min - pad;
    const hi = p.max + pad;
    const y = (v: number) => p.bottom - ((v - lo) / (hi - lo)) * (p.bottom - p.top);
    const x = (step: number) => p.left + ((step - layout.firstStep) / stepSpan) * (p.right - p.left);
    for (const [v, label] of [
      [hi, formatValue(hi)],
      [lo, formatValue(lo)],
    ] as const) {
      const yy = Math.round(y(v));
      r.hline(p.left + 1, p.right, yy, CURVE_COLORS.grid);
      r.text(p.left - 6 - textWidth(label), yy - 3, label, CURVE_COLORS.text);
    }
    r.vline(p.left, p.top, p.bottom, CURVE_COLORS.axis);
    r.hline(p.left, p.right, p.bottom, CURVE_COLORS.axis);
    r.text(p.left, p.bottom + 6, String(layout.firstStep), CURVE_COLORS.text);
    const last = String(layout.lastStep);
    r.text(p.right - textWidth(last), p.bottom + 6, last, CURVE_COLORS.text);
    if (p.points.length === 1) {
      const [s, v] = p.points[0]!;
      r.fillRect(x(s) - 2, y(v) - 2, 5, 5, CURVE_COLORS.line);
    }
    for (let i = 1; i < p.points.length; i++) {
      const [s0, v0] = p.points[i - 1]!;
      const [s1, v1] = p.points[i]!;
      r.line(x(s0), y(v0), x(s1), y(v1), CURVE_COLORS.line, 2);
    }
  }
  return r.png();
}
