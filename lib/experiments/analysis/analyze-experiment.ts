/**
 * An experiment's analysis: one SQL text over the raw archive (`ports.query`, its tenant) → per-arm moments →
 * comparisons, sample-ratio check, progress and a recommendation → a stored snapshot, the experiment's
 * `lastAnalysisId`, and each metric's lift chart over the snapshots.
 *
 * The window is [startedAt, to]: `to` is the given time or now, and no later than the experiment's stop. A draft has
 * nothing to analyse.
 */
import { randomUUID } from 'node:crypto';
import { ValidationError } from '../../errors.ts';
import type { BlobsPort } from '../../ports/blobs.ts';
import type { QueryPort } from '../../ports/query.ts';
import type { RecordsPort } from '../../ports/records.ts';
import { sampleRatioMismatch } from '../../shared/statistics/index.ts';
import { getExperiment, updateExperiment } from '../experiment-store.ts';
import { resolveMetricDefinitions } from '../metric-definitions.ts';
import { archiveKeys } from '../record-keys.ts';
import type { ExperimentAnalysis, ExperimentRecord } from '../schemas.ts';
import { analysisRecord } from './analysis-record.ts';
import { buildAnalysisSql } from './build-analysis-sql.ts';
import { compareExperimentMetrics } from './compare-experiment-metrics.ts';
import { listAnalyses } from './list-analyses.ts';
import { readAnalysisRows } from './read-analysis-rows.ts';
import { recommendExperimentAction } from './recommend-experiment-action.ts';
import { renderLiftChart } from './render-lift-chart.ts';

export { listAnalyses } from './list-analyses.ts';

export interface AnalysisPorts {
  records: RecordsPort;
  blobs: BlobsPort;
  query: QueryPort;
  now: () => Date;
}

/** Who the experiment's history says analysed it. */
export const ANALYSIS_ACTOR = 'analysis';

/** Snapshots a lift chart draws (the newest). */
export const LIFT_CHART_SNAPSHOTS = 200;

/** The exposure window of an analysis, as ISO-8601 UTC strings. */
export function analysisWindow(experiment: ExperimentRecord, to: Date): { from: string; to: string } {
  if (!experiment.startedAt) {
    throw new ValidationError(`Experiment ${experiment.definition.id} has not started: nothing to analyse`, [{ path: 'status', message: `is ${experiment.status}; start the experiment first` }]);
  }
  const from = new Date(experiment.startedAt);
  let end = to;
  if (experiment.stoppedAt && Date.parse(experiment.stoppedAt) < end.getTime()) end = new Date(experiment.stoppedAt);
  if (end.getTime() < from.getTime()) {
    throw new ValidationError(`The window ends before the experiment started (${from.toISOString()})`, [{ path: 'to', message: `is before startedAt ${from.toISOString()}` }]);
  }
  return { from: from.toISOString(), to: end.toISOString() };
}

/** Units per arm in the sample-ratio check: live arms (a stopped arm takes no new units) against their weight shares. */
function checkSampleRatio(experiment: ExperimentRecord, unitsPerArm: Record<string, number>): ExperimentAnalysis['srm'] {
  const stopped = new Set(experiment.stoppedArms.map((s) => s.arm));
  const live = experiment.definition.arms.filter((a) => !stopped.has(a.id));
  const totalWeight = live.reduce((s, a) => s + a.weight, 0);
  const expectedShares = Object.fromEntries(live.map((a) => [a.id, a.weight / totalWeight]));
  const observedUnits = Object.fromEntries(live.map((a) => [a.id, unitsPerArm[a.id] ?? 0]));
  return { expectedShares, observedUnits, ...sampleRatioMismatch(observedUnits, expectedShares) };
}

/**
 * Analyses the experiment now (or as of `options.to`), and unless `store === false` stores the snapshot, points the
 * experiment at it (`analysed` in its history) and redraws each metric's lift chart.
 *
 * @example
 * const analysis = await analyzeExperiment({ records, blobs, query, now: () => new Date() }, 'exp-1');
 * analysis.recommendation; // { action: 'continue', because: 'primary accepted is not yet decided …' }
 */
export async function analyzeExperiment(ports: AnalysisPorts, experimentId: string, options: { store?: boolean; to?: Date } = {}): Promise<ExperimentAnalysis> {
  const experiment = await getExperiment(ports.records, experimentId);
  const definition = experiment.definition;
  const now = ports.now();
  const window = analysisWindow(experiment, options.to ?? now);
  const names = [
    { name: definition.metrics.primary, path: 'metrics.primary' },
    ...definition.metrics.secondary.map((name, i) => ({ name, path: `metrics.secondary[${i}]` })),
    ...definition.metrics.guardrails.map((g, i) => ({ name: g.metric, path: `metrics.guardrails[${i}].metric` })),
  ];
  const definitions = await resolveMetricDefinitions(ports.records, names);
  const sqlInput = {
    tenant: ports.query.tenant,
    experimentId,
    unitType: definition.unitType,
    from: window.from,
    to: window.to,
    cupedPreDays: definition.cupedPreDays,
    metrics: names.map((n) => definitions.get(n.name)!),
  };
  const result = await ports.query.run(buildAnalysisSql(sqlInput));
  const aggregates = readAnalysisRows(result.rows, sqlInput);
  const unitsPerArm = Object.fromEntries(definition.arms.map((a) => [a.id, aggregates.arms.get(a.id)?.units ?? 0]));
  const metrics = compareExperimentMetrics(definition, experiment.plannedUnitsPerArm, definitions, aggregates);
  const srm = checkSampleRatio(experiment, unitsPerArm);
  const stopped = new Set(experiment.stoppedArms.map((s) => s.arm));
  const liveUnits = definition.arms.filter((a) => !stopped.has(a.id)).map((a) => unitsPerArm[a.id] ?? 0);
  const at = now.toISOString();
  const analysis: ExperimentAnalysis = {
    analysisId: `${at.replace(/[-:.]/g, '')}-${randomUUID().slice(0, 8)}`,
    experimentId,
    at,
    from: window.from,
    to: window.to,
    unitsPerArm,
    excludedUnits: aggregates.excludedUnits,
    plannedUnitsPerArm: experiment.plannedUnitsPerArm,
    progress: liveUnits.length > 0 ? Math.min(...liveUnits) / experiment.plannedUnitsPerArm : 0,
    srm,
    metrics,
    recommendation: recommendExperimentAction({ experiment, metrics, srm, unitsPerArm, now }),
    engine: result.engine,
    queryMs: result.ms,
  };
  if (options.store === false) return analysis;

  await ports.records.put(analysisRecord.encode(analysis));
  await updateExperiment(
    ports.records,
    experimentId,
    (current) => ({ ...current, lastAnalysisId: analysis.analysisId, lastAnalysisAt: analysis.at }),
    { change: 'analysed', by: ANALYSIS_ACTOR, detail: { analysisId: analysis.analysisId, recommendation: analysis.recommendation.action, units: unitsPerArm } },
    now,
  );
  const history = await listAnalyses(ports.records, experimentId, { limit: LIFT_CHART_SNAPSHOTS, oldestFirst: true });
  const sequential = definition.stoppingRule.kind === 'sequential';
  for (const m of metrics) {
    const png = await renderLiftChart(experimentId, m.metric, history, sequential || m.role === 'guardrail');
    await ports.blobs.put(archiveKeys.liftChart(ports.query.tenant, experimentId, m.metric), png, { contentType: 'image/png' });
  }
  return analysis;
}
