/**
 * `/flywheel compare RUN_A RUN_B`: two training runs side by side. The runs and their curves are read as
 * `GET /v1/training-runs/{runId}/curves` reads them (`getTrainingRun`, `readTrainingCurves`); every numeric metric
 * both runs report (loss first) becomes ONE line chart with a line per run (`buildLineChart`, rendered to PNG by
 * `renderChartPng`, the charts the console draws), at most `COMPARE_MAX_CHARTS` of them. The summary (status, steps,
 * final value of each shared metric) is the parent message; the charts go into its thread.
 *
 * @example
 * const { text, blocks, charts } = await compareRuns(ports, 'run-a', 'run-b');
 * // charts: [{ metric: 'loss', filename: 'compare-run-a-run-b-loss.png', png: Uint8Array }, …]
 */
import type { Ports } from '../../ports/ports.ts';
import { buildLineChart } from '../../shared/chart/build-line-chart.ts';
import { renderChartPng } from '../../shared/chart/render-chart.ts';
import { readTrainingCurves } from '../../training/runs/read-training-curves.ts';
import { getTrainingRun } from '../../training/runs/read-training-runs.ts';
import type { TrainingMetricsLine, TrainingRun } from '../../training/schemas.ts';

/** Charts posted per comparison: the rest are named in the summary. */
export const COMPARE_MAX_CHARTS = 6;
/** Fields of a metrics line that are not metrics. */
const NOT_METRICS = new Set(['step', 'at']);

export interface ComparedChart {
  metric: string;
  filename: string;
  png: Uint8Array;
}

export interface RunComparison {
  text: string;
  blocks: unknown[];
  /** Shared metrics, loss first, then by name. */
  metrics: string[];
  charts: ComparedChart[];
}

/** The numeric metrics of a run's lines. */
function metricsOf(lines: readonly TrainingMetricsLine[]): Set<string> {
  const names = new Set<string>();
  for (const line of lines) {
    for (const [k, v] of Object.entries(line)) if (!NOT_METRICS.has(k) && typeof v === 'number' && Number.isFinite(v)) names.add(k);
  }
  return names;
}

function lastValue(lines: readonly TrainingMetricsLine[], metric: string): number | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const v = (lines[i] as Record<string, unknown>)[metric];
    if (typeof v === 'number' && Number.isFinite(v)) return v;
  }
  return undefined;
}

/** A number in a few significant digits (0.000123 → 1.23e-4). */
function fmt(x: number | undefined): string {
  if (x === undefined) return 'n/a';
  if (x !== 0 && (Math.abs(x) < 1e-3 || Math.abs(x) >= 1e6)) return x.toExponential(2);
  return Number(x.toPrecision(4)).toString();
}

function runField(run: TrainingRun, lines: readonly TrainingMetricsLine[], metrics: readonly string[]): string {
  const steps = lines.at(-1)?.step ?? run.step;
  const finals = metrics.slice(0, 5).map((m) => `${m} ${fmt(lastValue(lines, m))}`);
  return [`*${run.runId}*`, `status: ${run.status}`, `steps: ${steps ?? 0}${run.request.trainer.steps ? ` / ${run.request.trainer.steps}` : ''}`, ...(finals.length > 0 ? [`final: ${finals.join(', ')}`] : [])].join('\n');
}

/** A file name Slack shows: letters, digits, dots and dashes. */
function safeName(s: string): string {
  return s.replace(/[^A-Za-z0-9.-]+/g, '-').slice(0, 60);
}

/**
 * @example
 * const comparison = await compareRuns(ports, 'run-a', 'run-b');
 */
export async function compareRuns(ports: Pick<Ports, 'records' | 'blobs'>, runAId: string, runBId: string): Promise<RunComparison> {
  const [runA, runB] = await Promise.all([getTrainingRun(ports, runAId), getTrainingRun(ports, runBId)]);
  const [linesA, linesB] = await Promise.all([readTrainingCurves(ports, runAId), readTrainingCurves(ports, runBId)]);
  const inB = metricsOf(linesB);
  const metrics = [...metricsOf(linesA)].filter((m) => inB.has(m)).sort((a, b) => (a === 'loss' ? -1 : b === 'loss' ? 1 : a.localeCompare(b)));
  const charts: ComparedChart[] = [];
  for (const metric of metrics.slice(0, COMPARE_MAX_CHARTS)) {
    const series = [runA, runB].map((run, i) => {
      const lines = i === 0 ? linesA : linesB;
      const points: Array<[number, number]> = [];
      for (const line of lines) {
        const v = (line as Record<string, unknown>)[metric];
        if (typeof v === 'number' && Number.isFinite(v)) points.push([line.step, v]);
      }
      return { name: run.runId, points };
    });
    const option = buildLineChart({ title: `${metric}: ${runAId} vs ${runBId}`, subtitle: 'per training step', x: { name: 'step', type: 'value' }, y: { name: metric }, series });
    charts.push({ metric, filename: `compare-${safeName(runAId)}-${safeName(runBId)}-${safeName(metric)}.png`, png: await renderChartPng(option) });
  }
  const text = `Comparing ${runAId} and ${runBId}`;
  const note =
    metrics.length === 0
      ? 'No metric both runs report yet: no chart.'
      : `${charts.length} chart${charts.length === 1 ? '' : 's'} in the thread (${metrics.slice(0, COMPARE_MAX_CHARTS).join(', ')})${metrics.length > COMPARE_MAX_CHARTS ? `; not drawn: ${metrics.slice(COMPARE_MAX_CHARTS).join(', ')}` : ''}.`;
  const blocks: unknown[] = [
    { type: 'section', text: { type: 'mrkdwn', text: `*${text}*` } },
    { type: 'section', fields: [runA, runB].map((run, i) => ({ type: 'mrkdwn', text: runField(run, i === 0 ? linesA : linesB, metrics).slice(0, 2000) })) },
    { type: 'context', elements: [{ type: 'mrkdwn', text: note.slice(0, 3000) }] },
  ];
  return { text, blocks, metrics, charts };
}
