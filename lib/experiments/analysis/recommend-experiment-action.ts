/**
 * What an analysis recommends, with the rule behind it in words (a person or the schedule acts on it), first rule
 * that applies wins:
 *
 * 1. `stop-arm`: a sample-ratio mismatch (the live treatment arm whose share strays furthest), or a guardrail breached;
 * 2. `rollback`: the primary metric is worse on a live arm with the stopping rule satisfied;
 * 3. `ship`: the primary metric is better on a live arm with the stopping rule satisfied (sequential: the always-valid
 *    interval excludes 0; fixed-horizon: the planned sample reached and the fixed interval excludes 0), no guardrail
 *    breached; the arm with the largest lift in the good direction;
 * 4. `widen-ramp`: a further ramp step exists, the current one has held its `minHours`, and every guardrail holds;
 * 5. `extend`: the planned sample is reached or the maximum duration is over, and the primary is inconclusive;
 * 6. `continue`.
 */
import { SAMPLE_RULES } from '../../shared/statistics/index.ts';
import type { ExperimentAnalysis, ExperimentRecord, MetricAnalysis } from '../schemas.ts';

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

export type Recommendation = ExperimentAnalysis['recommendation'];

export interface RecommendationInput {
  experiment: ExperimentRecord;
  metrics: readonly MetricAnalysis[];
  srm: ExperimentAnalysis['srm'];
  unitsPerArm: Readonly<Record<string, number>>;
  now: Date;
}

const pct = (x: number | null | undefined) => (x === null || x === undefined ? 'n/a' : `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`);

function intervalText(c: MetricAnalysis['comparisons'][number], sequential: boolean): string {
  const ci = sequential ? c.sequentialCi : c.ci;
  return ci ? `${pct(c.relativeLift)} [${pct(ci.low)}, ${pct(ci.high)}]${sequential ? ' (always-valid)' : ''}` : pct(c.relativeLift);
}

/** The live treatment arm whose observed share of units strays furthest (relatively) from its expected share. */
function furthestFromExpected(srm: ExperimentAnalysis['srm'], live: readonly string[]): string | undefined {
  const total = Object.values(srm.observedUnits).reduce((a, b) => a + b, 0);
  let worst: { arm: string; gap: number } | undefined;
  for (const arm of live) {
    const expected = srm.expectedShares[arm];
    if (!expected || total === 0) continue;
    const gap = Math.abs((srm.observedUnits[arm] ?? 0) / total - expected) / expected;
    if (!worst || gap > worst.gap) worst = { arm, gap };
  }
  return worst?.arm;
}

/**
 * @example
 * recommendExperimentAction({ experiment, metrics, srm, unitsPerArm, now });
 * // { action: 'ship', arm: 'treatment', because: 'primary accepted better on treatment: +8.1% [+2.0%, +14.3%] (always-valid) …' }
 */
export function recommendExperimentAction(input: RecommendationInput): Recommendation {
  const { experiment, metrics, srm, unitsPerArm, now } = input;
  const definition = experiment.definition;
  const control = definition.arms.find((a) => a.control)!.id;
  const stopped = new Set(experiment.stoppedArms.map((s) => s.arm));
  const live = definition.arms.filter((a) => !a.control && !stopped.has(a.id)).map((a) => a.id);
  const sequential = definition.stoppingRule.kind === 'sequential';
  const planned = experiment.plannedUnitsPerArm;
  const reached = (arm: string) => Math.min(unitsPerArm[control] ?? 0, unitsPerArm[arm] ?? 0) >= planned;

  if (srm.mismatch) {
    const arm = furthestFromExpected(srm, live);
    if (arm) {
      return { action: 'stop-arm', arm, because: `sample-ratio mismatch (chi-squared ${srm.chiSquared?.toFixed(2) ?? 'n/a'}, p = ${srm.pValue?.toExponential(2) ?? 'n/a'}); ${arm} strays furthest from its expected share. Rule: ${SAMPLE_RULES.srm}` };
    }
  }

  const guardrails = metrics.filter((m) => m.role === 'guardrail');
  for (const g of guardrails) {
    if (!g.guardrailBreached) continue;
    const maxRegression = definition.metrics.guardrails.find((x) => x.metric === g.metric)?.maxRegression ?? 0;
    for (const c of g.comparisons) {
      if (!live.includes(c.arm) || !c.sequentialCi || c.verdict === 'too-few-units') continue;
      const beyond = g.direction === 'increase' ? c.sequentialCi.high < -maxRegression : c.sequentialCi.low > maxRegression;
      if (beyond) {
        return {
          action: 'stop-arm',
          arm: c.arm,
          because: `guardrail ${g.metric} breached on ${c.arm}: ${intervalText(c, true)} lies wholly beyond ${(maxRegression * 100).toFixed(1)}% on the bad side (${g.direction} is good). Rule: a guardrail is breached when its always-valid interval of the relative lift lies wholly past maxRegression on the bad side; the arm stops at once`,
        };
      }
    }
  }

  const primary = metrics.find((m) => m.role === 'primary')!;
  const decisive = primary.comparisons.filter((c) => live.includes(c.arm) && (sequential || reached(c.arm)));
  const ruleText = sequential
    ? 'sequential: act when the always-valid interval of the primary metric excludes 0'
    : `fixed-horizon: act only once both arms reach the planned ${planned} units and the 95% interval of the primary metric excludes 0`;
  const worse = decisive.find((c) => c.verdict === 'worse');
  if (worse) {
    return { action: 'rollback', arm: worse.arm, because: `primary ${primary.metric} is worse on ${worse.arm}: ${intervalText(worse, sequential)}. Rule: ${ruleText}. ${worse.rule}` };
  }
  const good = primary.direction === 'increase' ? 1 : -1;
  const better = decisive.filter((c) => c.verdict === 'better').sort((a, b) => good * ((b.relativeLift ?? b.difference ?? 0) - (a.relativeLift ?? a.difference ?? 0)));
  if (better.length > 0) {
    const best = better[0]!;
    return { action: 'ship', arm: best.arm, because: `primary ${primary.metric} is better on ${best.arm}: ${intervalText(best, sequential)}; no guardrail breached. Rule: ${ruleText}. ${best.rule}` };
  }

  const guardrailsHold = guardrails.every((g) => !g.guardrailBreached && g.comparisons.every((c) => c.verdict !== 'worse'));
  const next = experiment.rampStep + 1;
  const step = definition.ramp[experiment.rampStep];
  if (experiment.status === 'running' && step && next < definition.ramp.length && guardrailsHold && !srm.mismatch) {
    const since = Date.parse(experiment.rampStepSince ?? experiment.startedAt ?? now.toISOString());
    const heldHours = (now.getTime() - since) / HOUR_MS;
    if (heldHours >= step.minHours) {
      return { action: 'widen-ramp', because: `ramp step ${experiment.rampStep} (${step.percent}%) has held ${heldHours.toFixed(1)} h ≥ ${step.minHours} h with every guardrail holding: widen to ${definition.ramp[next]!.percent}%` };
    }
  }

  const startedAt = experiment.startedAt ? Date.parse(experiment.startedAt) : now.getTime();
  const durationOver = now.getTime() - startedAt >= definition.maxDurationDays * DAY_MS;
  const sampleReached = live.length > 0 && live.every(reached);
  if (sampleReached || durationOver) {
    return {
      action: 'extend',
      because: `${sampleReached ? `the planned ${planned} units per arm are reached` : `the maximum of ${definition.maxDurationDays} days is over`} and primary ${primary.metric} is inconclusive: extend (or decide). Rule: ${ruleText}`,
    };
  }
  const units = Object.entries(unitsPerArm).map(([arm, n]) => `${arm} ${n}`).join(', ');
  return { action: 'continue', because: `primary ${primary.metric} is not yet decided (${units || 'no'} units of ${planned} planned per arm). Rule: ${ruleText}` };
}
