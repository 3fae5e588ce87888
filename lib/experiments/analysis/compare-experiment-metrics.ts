/**
 * Every metric of an experiment compared between each treatment arm and the control, from the per-arm moments the SQL
 * returned: per arm its value and standard error, per treatment arm `compareArms` (CUPED with the slope pooled over
 * all arms; the always-valid interval tuned to the planned sample when the stopping rule is sequential, and always for
 * guardrails, which are watched continuously), p-values adjusted by Holm over the primary, secondary and guardrail
 * comparisons together and by Benjamini–Hochberg over the failure modes, and each guardrail's breach.
 */
import {
  armValue,
  benjaminiHochbergAdjust,
  compareArms,
  holmAdjust,
  pooledCupedTheta,
  type ArmMoments,
} from '../../shared/statistics/index.ts';
import { FAILURE_MODE_METRIC_PREFIX, type ExperimentDefinition, type MetricAnalysis, type MetricDefinition } from '../schemas.ts';
import type { AnalysisAggregates } from './read-analysis-rows.ts';

/** The significance level of every comparison. */
export const ANALYSIS_ALPHA = 0.05;

/** A failure mode's rate is shown per thousand turns. */
export const FAILURE_MODE_DISPLAY_SCALE = 1000;

type Role = MetricAnalysis['role'];

const EMPTY: ArmMoments = { units: 0, sumX: 0, sumX2: 0 };

/**
 * Whether a guardrail's always-valid interval of the relative lift lies wholly past `maxRegression` on its bad side.
 * Below the minimum sample nothing is breached (that interval is not one to act on).
 */
export function guardrailBreached(comparison: MetricAnalysis['comparisons'][number], direction: 'increase' | 'decrease', maxRegression: number): boolean {
  const ci = comparison.sequentialCi;
  if (!ci || comparison.verdict === 'too-few-units') return false;
  return direction === 'increase' ? ci.high < -maxRegression : ci.low > maxRegression;
}

/** The definition of a failure mode's rate: its events over the exposures (turns served), lower is better. */
export function failureModeDefinition(metric: string): MetricDefinition {
  return {
    name: metric,
    description: `Turns classified ${metric.slice(FAILURE_MODE_METRIC_PREFIX.length)} per thousand turns served`,
    kind: 'ratio',
    numerator: { metric, aggregate: 'count' },
    denominator: { metric: '$exposures', aggregate: 'count' },
    direction: 'decrease',
    displayScale: FAILURE_MODE_DISPLAY_SCALE,
    createdAt: '1970-01-01T00:00:00.000Z',
  };
}

function analyseOne(
  experiment: ExperimentDefinition,
  plannedUnitsPerArm: number,
  definition: MetricDefinition,
  role: Role,
  byArm: ReadonlyMap<string, ArmMoments>,
): MetricAnalysis {
  const control = experiment.arms.find((a) => a.control)!;
  const moments = (arm: string) => byArm.get(arm) ?? { ...EMPTY };
  const cuped = definition.kind !== 'ratio' && experiment.cupedPreDays > 0;
  const theta = cuped ? pooledCupedTheta(experiment.arms.map((a) => moments(a.id))) : null;
  const sequential = experiment.stoppingRule.kind === 'sequential' || role === 'guardrail';
  const arms = experiment.arms.map((a) => {
    const m = moments(a.id);
    const { value, se } = armValue(m, definition.kind);
    return {
      arm: a.id,
      units: m.units,
      value,
      se,
      ...(definition.kind === 'ratio' ? { numeratorSum: m.sumX, denominatorSum: m.sumY ?? 0 } : {}),
    };
  });
  const comparisons = experiment.arms
    .filter((a) => !a.control)
    .map((a) => {
      const c = compareArms(moments(control.id), moments(a.id), {
        kind: definition.kind,
        direction: definition.direction,
        alpha: ANALYSIS_ALPHA,
        cuped,
        ...(sequential ? { sequentialTuningUnits: plannedUnitsPerArm } : {}),
        ...(theta !== null ? { theta } : {}),
      });
      return {
        arm: a.id,
        control: control.id,
        difference: c.difference,
        relativeLift: c.relativeLift,
        ci: c.ci,
        sequentialCi: c.sequentialCi,
        pValue: c.pValue,
        adjustedPValue: null as number | null,
        chanceToWin: c.chanceToWin,
        cuped: c.cuped,
        verdict: c.verdict,
        rule: c.rule,
      };
    });
  return { metric: definition.name, role, kind: definition.kind, direction: definition.direction, displayScale: definition.displayScale, arms, comparisons };
}

/** Writes the adjusted p-values of one family (every comparison of these metrics) in place. */
function adjust(metrics: MetricAnalysis[], method: (p: readonly (number | null)[]) => (number | null)[]): void {
  const all = metrics.flatMap((m) => m.comparisons);
  const adjusted = method(all.map((c) => c.pValue));
  all.forEach((c, i) => {
    c.adjustedPValue = adjusted[i] ?? null;
  });
}

/**
 * @example
 * const metrics = compareExperimentMetrics(record.definition, record.plannedUnitsPerArm, definitions, aggregates);
 * metrics[0]; // { metric: 'accepted', role: 'primary', arms: [...], comparisons: [{ arm: 'treatment', relativeLift: 0.08, … }] }
 */
export function compareExperimentMetrics(
  experiment: ExperimentDefinition,
  plannedUnitsPerArm: number,
  definitions: ReadonlyMap<string, MetricDefinition>,
  aggregates: AnalysisAggregates,
): MetricAnalysis[] {
  const roles: Array<{ name: string; role: Role; maxRegression?: number }> = [
    { name: experiment.metrics.primary, role: 'primary' },
    ...experiment.metrics.secondary.map((name) => ({ name, role: 'secondary' as const })),
    ...experiment.metrics.guardrails.map((g) => ({ name: g.metric, role: 'guardrail' as const, maxRegression: g.maxRegression })),
  ];
  const main = roles.map(({ name, role, maxRegression }) => {
    const definition = definitions.get(name);
    if (!definition) throw new RangeError(`metric ${name} has no definition`);
    const analysis = analyseOne(experiment, plannedUnitsPerArm, definition, role, aggregates.metrics.get(name) ?? new Map());
    if (role === 'guardrail') analysis.guardrailBreached = analysis.comparisons.some((c) => guardrailBreached(c, definition.direction, maxRegression ?? 0));
    return analysis;
  });
  const modes = [...aggregates.failureModes.keys()]
    .sort()
    .map((name) => analyseOne(experiment, plannedUnitsPerArm, failureModeDefinition(name), 'failure-mode', aggregates.failureModes.get(name)!));
  adjust(main, holmAdjust);
  adjust(modes, benjaminiHochbergAdjust);
  return [...main, ...modes];
}
