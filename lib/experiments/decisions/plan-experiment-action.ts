/**
 * What the schedule does after an analysis of a running experiment, decided without side effects so the schedule, the
 * simulation and the tests share one rule:
 *
 * - a sample-ratio mismatch (p < 0.001) stops the treatment arm whose share strays furthest from its expected share:
 *   assignment or logging is broken for it, so none of its numbers can be trusted;
 * - a guardrail breach (the always-valid interval of the relative lift wholly beyond `maxRegression` on the bad side)
 *   stops that arm at once;
 * - when every treatment arm is stopped, the experiment stops;
 * - otherwise a ramp step that has held its `minHours` with every guardrail holding and no mismatch widens to the next;
 * - past `maxDurationDays` the experiment stops and people are asked to decide.
 */
import type { ExperimentAnalysis, ExperimentRecord, MetricAnalysis } from '../schemas.ts';

export type PlannedAction =
  | { kind: 'none' }
  | { kind: 'stop-arm'; arm: string; reason: 'guardrail' | 'srm'; detail: string }
  | { kind: 'widen-ramp'; toStep: number }
  | { kind: 'stop'; reason: string };

/** Words in the stop reason of an experiment the schedule stopped at its maximum duration (`extend` runs it again). */
export const MAX_DURATION_REACHED = 'ran its maximum';

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

/**
 * The actions the schedule takes after `analysis`, in order (`[{ kind: 'none' }]` when nothing is due).
 *
 * @example
 * planExperimentAction(experiment, analysis, new Date());
 * // [{ kind: 'stop-arm', arm: 'treatment', reason: 'guardrail', detail: 'latency_ms_per_turn: +12.0% [+6.1%, +18.3%] …' }, { kind: 'stop', … }]
 */
export function planExperimentAction(experiment: ExperimentRecord, analysis: ExperimentAnalysis, now: Date): PlannedAction[] {
  if (experiment.status !== 'running') return [{ kind: 'none' }];
  const definition = experiment.definition;
  const control = definition.arms.find((a) => a.control)?.id;
  const alreadyStopped = new Set(experiment.stoppedArms.map((s) => s.arm));
  const live = definition.arms.filter((a) => a.id !== control && !alreadyStopped.has(a.id)).map((a) => a.id);
  const actions: PlannedAction[] = [];
  const stopping = new Set<string>();
  const stopArm = (arm: string, reason: 'guardrail' | 'srm', detail: string) => {
    if (stopping.has(arm)) return;
    stopping.add(arm);
    actions.push({ kind: 'stop-arm', arm, reason, detail });
  };

  if (analysis.srm.mismatch) {
    const arm = furthestFromExpected(analysis, live);
    if (arm) stopArm(arm, 'srm', srmDetail(analysis));
  }

  const guardrails = new Map(definition.metrics.guardrails.map((g) => [g.metric, g.maxRegression]));
  const breaches: string[] = [];
  for (const metric of analysis.metrics) {
    if (metric.role !== 'guardrail') continue;
    const maxRegression = guardrails.get(metric.metric) ?? 0;
    for (const arm of breachedArms(metric, maxRegression, live)) {
      breaches.push(`${arm}:${metric.metric}`);
      stopArm(arm, 'guardrail', guardrailDetail(metric, arm, maxRegression));
    }
  }

  const remaining = live.filter((a) => !stopping.has(a));
  if (remaining.length === 0) {
    // Stopped now, or before (a person's stop, or a tick that died before it stopped the experiment).
    const all = [...alreadyStopped, ...stopping].filter((a) => a !== control);
    actions.push({ kind: 'stop', reason: `every treatment arm is stopped (${all.join(', ')}): the control serves everyone` });
    return actions;
  }

  const startedAt = experiment.startedAt ? Date.parse(experiment.startedAt) : undefined;
  if (startedAt !== undefined && now.getTime() - startedAt >= definition.maxDurationDays * DAY_MS) {
    actions.push({ kind: 'stop', reason: `${MAX_DURATION_REACHED} of ${definition.maxDurationDays} days (maxDurationDays): decide ship, rollback or extend` });
    return actions;
  }

  const next = experiment.rampStep + 1;
  if (actions.length === 0 && next < definition.ramp.length && !analysis.srm.mismatch && guardrailsHold(analysis)) {
    const since = Date.parse(experiment.rampStepSince ?? experiment.startedAt ?? analysis.to);
    const step = definition.ramp[experiment.rampStep];
    if (step && now.getTime() - since >= step.minHours * HOUR_MS) actions.push({ kind: 'widen-ramp', toStep: next });
  }
  return actions.length > 0 ? actions : [{ kind: 'none' }];
}

/** The live treatment arm whose observed share of units is furthest (relatively) from its expected share. */
function furthestFromExpected(analysis: ExperimentAnalysis, live: string[]): string | undefined {
  const total = Object.values(analysis.srm.observedUnits).reduce((a, b) => a + b, 0);
  let worst: { arm: string; gap: number } | undefined;
  for (const arm of live) {
    const expected = analysis.srm.expectedShares[arm];
    if (!expected || total === 0) continue;
    const gap = Math.abs((analysis.srm.observedUnits[arm] ?? 0) / total - expected) / expected;
    if (!worst || gap > worst.gap) worst = { arm, gap };
  }
  return worst?.arm ?? live[0];
}

/**
 * Arms whose always-valid interval of the relative lift lies wholly past `maxRegression` on the metric's bad side.
 * Below the minimum sample (`too-few-units`) nothing is breached: the interval there is not one to act on.
 */
function breachedArms(metric: MetricAnalysis, maxRegression: number, live: string[]): string[] {
  const arms: string[] = [];
  for (const c of metric.comparisons) {
    if (!live.includes(c.arm) || c.verdict === 'too-few-units' || !c.sequentialCi) continue;
    const breached = metric.direction === 'increase' ? c.sequentialCi.high < -maxRegression : c.sequentialCi.low > maxRegression;
    if (breached) arms.push(c.arm);
  }
  // The analysis said breached but gave no interval per arm to tell which: the arms it found worse.
  if (arms.length === 0 && metric.guardrailBreached) {
    for (const c of metric.comparisons) if (live.includes(c.arm) && c.verdict === 'worse') arms.push(c.arm);
  }
  return arms;
}

/** Every guardrail holds: none breached and none worse (a ramp widens only on good news or no news). */
function guardrailsHold(analysis: ExperimentAnalysis): boolean {
  return analysis.metrics.every((m) => m.role !== 'guardrail' || (!m.guardrailBreached && m.comparisons.every((c) => c.verdict !== 'worse')));
}

const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;

function guardrailDetail(metric: MetricAnalysis, arm: string, maxRegression: number): string {
  const c = metric.comparisons.find((x) => x.arm === arm);
  const lift = c?.relativeLift === null || c?.relativeLift === undefined ? 'n/a' : pct(c.relativeLift);
  const ci = c?.sequentialCi ? ` [${pct(c.sequentialCi.low)}, ${pct(c.sequentialCi.high)}] (always-valid)` : '';
  const units = metric.arms.map((a) => `${a.arm} ${a.units} units`).join(', ');
  return `guardrail ${metric.metric} (${metric.direction === 'increase' ? 'higher' : 'lower'} is better) regressed beyond ${(maxRegression * 100).toFixed(1)}% on ${arm}: ${lift}${ci} vs ${c?.control ?? 'control'}; ${units}`;
}

function srmDetail(analysis: ExperimentAnalysis): string {
  const total = Object.values(analysis.srm.observedUnits).reduce((a, b) => a + b, 0);
  const shares = Object.entries(analysis.srm.observedUnits)
    .map(([arm, n]) => `${arm} ${n} units (${total ? ((n / total) * 100).toFixed(1) : '0.0'}% vs expected ${((analysis.srm.expectedShares[arm] ?? 0) * 100).toFixed(1)}%)`)
    .join(', ');
  const p = analysis.srm.pValue === null ? 'n/a' : analysis.srm.pValue.toExponential(2);
  return `sample-ratio mismatch: chi-squared ${analysis.srm.chiSquared?.toFixed(2) ?? 'n/a'}, p = ${p} < 0.001; ${shares}`;
}
