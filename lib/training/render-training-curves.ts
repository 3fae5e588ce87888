/**
 * A training run's curves as a PNG: one panel per metric the trainer writes to `metrics.jsonl` (the loss, each loss
 * term, the KL on the decision spans, the locality KL off them, the train–inference log-prob mismatch, the rejected
 * token's probability…) and tokens per second (`tokens / stepSeconds`), each against the step. Each panel is a line
 * chart from the shared builder (`lib/shared/chart/build-line-chart.ts`, the console's too), rendered by ECharts and
 * resvg (`lib/shared/chart/render-chart.ts`).
 *
 * Which metrics: every finite number of a line but the bookkeeping (`step`, `at`, `tokens`, `stepSeconds`), one level
 * of nested objects flattened (`terms.outcome`), so a term the trainer adds gets its panel without a change here. The
 * known ones come first, in the order people read them.
 *
 * `curvePanels` computes the panels and the picture's size; `trainingCurvesOptions` their chart options;
 * `renderTrainingCurves` the PNG.
 */
import type { EChartsOption } from 'echarts';
import { buildLineChart } from '../shared/chart/build-line-chart.ts';
import { renderChartsPng } from '../shared/chart/render-chart.ts';
import { CURVE_MAX_POINTS, downsample } from './runs/read-training-curves.ts';
import type { TrainingMetricsLine } from './schemas.ts';

/** The derived throughput panel's name. */
export const TOKENS_PER_SECOND = 'tokens/s';

const BOOKKEEPING = new Set(['step', 'at', 'tokens', 'stepSeconds']);
/** Known metrics first, by the start of their name (case-insensitive), in reading order; the rest alphabetically. */
const ORDER = ['loss', 'outcome', 'decision', 'teacher', 'kl', 'spankl', 'locality', 'mismatch', 'offpolicy', 'rejected'];

/** Two panels across, each a 450 × 260 chart. */
const COLUMNS = 2;
export const CURVE_CELL = { width: 450, height: 260 } as const;

export interface CurvePanel {
  metric: string;
  /** (step, value) in step order; non-finite values are left out. */
  points: Array<readonly [number, number]>;
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
 * The panels (one per metric, in reading order) and their points; the picture's size. Lines are taken in step order; a step written twice (a resumed run redoing
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
  const columns = Math.max(1, Math.min(COLUMNS, names.length));
  const rows = Math.max(1, Math.ceil(names.length / columns));
  const panels = names.map((metric): CurvePanel => {
    const points = series.get(metric)!;
    // A loop, not Math.min(...values): a spread of a long series overflows the call stack.
    let min = Infinity;
    let max = -Infinity;
    for (const [, v] of points) {
      if (v < min) min = v;
      if (v > max) max = v;
    }
    return { metric, points, min, max };
  });
  return { width: columns * CURVE_CELL.width, height: rows * CURVE_CELL.height, panels, firstStep, lastStep };
}

/**
 * One line chart option per panel (a single "no steps yet" chart for a run without lines).
 *
 * @example
 * const options = trainingCurvesOptions('run-1', await readTrainingCurves({ blobs }, 'run-1'));
 */
export function trainingCurvesOptions(runId: string, lines: readonly TrainingMetricsLine[]): EChartsOption[] {
  const layout = curvePanels(lines);
  if (layout.panels.length === 0) {
    return [buildLineChart({ title: `run ${runId}: no steps yet`, x: { name: 'step', type: 'value' }, y: {}, series: [] })];
  }
  const subtitle = `run ${runId} · steps ${layout.firstStep}–${layout.lastStep}`;
  return layout.panels.map((p) =>
    buildLineChart({
      title: p.metric,
      subtitle,
      x: { name: 'step', type: 'value' },
      y: {},
      series: [{ name: p.metric, points: p.points.map(([step, v]) => [step, v]) }],
    }),
  );
}

/**
 * The PNG of a run's curves: the panels two across.
 *
 * @example
 * await writeFile('curves.png', await renderTrainingCurves('run-1', await readTrainingCurves({ blobs }, 'run-1')));
 */
export async function renderTrainingCurves(runId: string, lines: readonly TrainingMetricsLine[]): Promise<Buffer> {
  const options = trainingCurvesOptions(runId, lines);
  return Buffer.from(await renderChartsPng(options, { columns: COLUMNS, cell: CURVE_CELL }));
}
