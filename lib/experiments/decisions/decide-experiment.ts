/**
 * A person's decision on an experiment, resting on its newest analysis:
 * - `ship`: the arm's checkpoint becomes the registry incumbent (what sweeps compare against, and the next
 *   experiment's control); the experiment is decided;
 * - `rollback`: decided, the control stays (the incumbent is unchanged);
 * - `extend`: `maxDurationDays += extendDays`; the experiment keeps running (or runs again, when the schedule had
 *   stopped it at its maximum duration; one a person or a guardrail stopped stays stopped: 409).
 * Every change is an entry of the experiment's history; ship and rollback publish `experiment.decided` and tell people.
 * A retry of the same decision changes nothing and answers the stored one.
 */
import { ConflictError, ValidationError } from '../../errors.ts';
import type { EventsPort } from '../../ports/events.ts';
import type { RecordsPort } from '../../ports/records.ts';
import { resolveOpenNotice } from '../../people/notices/notice-store.ts';
import { listIncumbentHistory, setIncumbent } from '../../registry/incumbent.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { listAnalyses } from '../analysis/list-analyses.ts';
import { getExperiment, updateExperiment } from '../experiment-store.ts';
import { DecideInput, type ExperimentAnalysis, type ExperimentDecision, type ExperimentRecord } from '../schemas.ts';
import { sendOnce } from '../schedule/notice-once.ts';
import { EXPERIMENT_DECIDED, EXPERIMENT_STOPPED, notifierOf, pct, type Notify } from './experiment-notices.ts';
import { MAX_DURATION_REACHED } from './plan-experiment-action.ts';

export interface DecidePorts {
  records: RecordsPort;
  events: EventsPort;
  now: () => Date;
  notify?: Notify;
}

export interface DecideResult {
  experiment: ExperimentRecord;
  decision: ExperimentDecision;
  /** False when this was a retry of a decision already taken. */
  changed: boolean;
}

/**
 * Takes a decision on a running or stopped experiment that has an analysis.
 *
 * @example
 * const { experiment } = await decideExperiment(ports, 'exp-1', { kind: 'ship', arm: 'treatment', reason: 'thumbs +3%' }, 'key:ana');
 * // experiment.status === 'decided'; getIncumbent(ports.records) → { checkpoint: <treatment's checkpoint>, … }
 */
export async function decideExperiment(ports: DecidePorts, experimentId: string, body: unknown, by: string): Promise<DecideResult> {
  const input = parseInput(DecideInput, body, 'decision');
  const current = await getExperiment(ports.records, experimentId);
  const arms = current.definition.arms;
  const control = arms.find((a) => a.control)!;

  const sameAs = (d: ExperimentDecision | undefined) => d !== undefined && d.kind === input.kind && (input.kind !== 'ship' || d.arm === input.arm);
  const alreadyDecided = (d: ExperimentDecision | undefined) =>
    new ConflictError(`experiment ${experimentId} is already decided (${d?.kind ?? 'unknown'}${d?.arm ? ` ${d.arm}` : ''} by ${d?.by ?? '?'}): a decision is final`);
  if (current.status === 'decided') {
    // A retry of the decision taken: finish what a crash may have left undone (the incumbent, the notice), no more.
    if (sameAs(current.decision)) {
      await finishDecision(ports, current, current.decision!);
      return { experiment: current, decision: current.decision!, changed: false };
    }
    throw alreadyDecided(current.decision);
  }
  if (current.status !== 'running' && current.status !== 'stopped') {
    throw new ConflictError(`experiment ${experimentId} is ${current.status}: only a running or stopped experiment is decided (start it first)`);
  }
  const [analysis] = await listAnalyses(ports.records, experimentId, { limit: 1 });
  if (!analysis) throw new ConflictError(`experiment ${experimentId} has no analysis yet: analyse it (POST /v1/experiments/${experimentId}/analyze) before deciding`);

  if (input.kind === 'ship') {
    const arm = arms.find((a) => a.id === input.arm);
    if (!arm) throw new ValidationError(`no arm ${input.arm} in experiment ${experimentId}`, [{ path: 'arm', message: `one of ${arms.map((a) => a.id).join(', ')}` }]);
    if (arm.control) throw new ValidationError(`arm ${arm.id} is the control: keeping it is a rollback`, [{ path: 'arm', message: 'ship a treatment arm, or decide rollback' }]);
    const stopped = current.stoppedArms.find((s) => s.arm === arm.id);
    if (stopped) throw new ValidationError(`arm ${arm.id} was stopped (${stopped.reason}: ${stopped.detail}): it cannot ship`, [{ path: 'arm', message: `stopped by ${stopped.reason}` }]);
  }
  if (input.kind === 'rollback' && input.arm !== undefined && !arms.some((a) => a.id === input.arm)) {
    throw new ValidationError(`no arm ${input.arm} in experiment ${experimentId}`, [{ path: 'arm', message: `one of ${arms.map((a) => a.id).join(', ')}` }]);
  }
  if (input.kind === 'extend') return extend(ports, current, analysis, input.extendDays!, input.reason, by);

  const now = ports.now();
  const shipped = input.kind === 'ship' ? arms.find((a) => a.id === input.arm)! : undefined;
  const decision: ExperimentDecision = {
    kind: input.kind,
    arm: shipped?.id ?? input.arm ?? control.id,
    reason: input.reason,
    by,
    at: now.toISOString(),
    analysisId: analysis.analysisId,
    ...(shipped ? { promoted: shipped.checkpoint } : {}),
  };
  // The decision first, the incumbent after: a decision that lost a race (another person's, meanwhile) never touches
  // the incumbent; a crash between the two is finished by the retry (`finishDecision`).
  const { record, changed } = await updateExperiment(
    ports.records,
    experimentId,
    (e) => {
      if (e.status === 'decided') {
        if (sameAs(e.decision)) return undefined;
        throw alreadyDecided(e.decision);
      }
      if (e.status !== 'running' && e.status !== 'stopped') throw new ConflictError(`experiment ${experimentId} is ${e.status}`);
      return { ...e, status: 'decided', decision, ...(e.stoppedAt ? {} : { stoppedAt: decision.at }) };
    },
    { change: 'decided', by, detail: { kind: decision.kind, arm: decision.arm, reason: decision.reason, analysisId: decision.analysisId, ...(decision.promoted ? { promoted: decision.promoted } : {}) } },
    now,
  );
  const stored = record.decision ?? decision;
  await finishDecision(ports, record, stored, analysis);
  return { experiment: record, decision: stored, changed };
}

/**
 * What follows a ship or rollback, each step safe to repeat: the shipped checkpoint made the incumbent (unless the
 * registry's history shows this experiment already promoted it: a later one may have replaced it since), then
 * `experiment.decided` and the notice, sent once.
 */
async function finishDecision(ports: DecidePorts, experiment: ExperimentRecord, decision: ExperimentDecision, analysis?: ExperimentAnalysis): Promise<void> {
  const id = experiment.definition.id;
  const control = experiment.definition.arms.find((a) => a.control)!;
  const now = ports.now();
  // The notice that asked for this decision has its answer, wherever it was given.
  await resolveOpenNotice(ports.records, `${EXPERIMENT_STOPPED}:${id}`, { by: decision.by, outcome: `Decided: ${decision.kind}${decision.arm ? ` ${decision.arm}` : ''}` }, now);
  if (decision.promoted) {
    const history = await listIncumbentHistory(ports.records, { limit: 1000 });
    if (!history.some((h) => h.experimentId === id && h.checkpoint === decision.promoted)) {
      await setIncumbent(ports.records, { checkpoint: decision.promoted, experimentId: id, by: decision.by }, now);
    }
  }
  const summary = analysis && analysis.analysisId === decision.analysisId ? primarySummary(analysis) : `Analysis ${decision.analysisId}.`;
  await sendOnce(
    { records: ports.records, events: ports.events, notify: notifierOf(ports.notify, ports) },
    id,
    {
      id: `${EXPERIMENT_DECIDED}:${id}`,
      kind: 'info',
      severity: 'info',
      link: `/experiments/${encodeURIComponent(id)}`,
      source: { capability: 'experiments', runKind: 'experiment', runId: id },
      title: decision.promoted ? `Experiment ${id} shipped ${decision.arm}: ${decision.promoted} is the incumbent` : `Experiment ${id} rolled back: ${control.checkpoint} (control) stays`,
      text: `${decision.reason}\n${summary}`,
      fields: { experiment: id, decision: decision.kind, by: decision.by, analysis: decision.analysisId, ...(decision.promoted ? { incumbent: decision.promoted } : {}) },
    },
    { type: EXPERIMENT_DECIDED, detail: { experimentId: id, kind: decision.kind, arm: decision.arm ?? control.id, analysisId: decision.analysisId, by: decision.by, ...(decision.promoted ? { promoted: decision.promoted } : {}) } },
    now,
  );
}

async function extend(ports: DecidePorts, current: ExperimentRecord, analysis: ExperimentAnalysis, days: number, reason: string, by: string): Promise<DecideResult> {
  const id = current.definition.id;
  const maxDurationDays = current.definition.maxDurationDays + days;
  if (maxDurationDays > 365) throw new ValidationError(`experiment ${id} would run ${maxDurationDays} days: at most 365`, [{ path: 'extendDays', message: `at most ${365 - current.definition.maxDurationDays}` }]);
  if (current.status === 'stopped' && !current.stopReason?.startsWith(MAX_DURATION_REACHED)) {
    throw new ConflictError(`experiment ${id} was stopped (${current.stopReason ?? 'no reason'}), not at its maximum duration: extending runs only what the clock stopped (create a new experiment to run it again)`);
  }
  const treatments = current.definition.arms.filter((a) => !a.control);
  if (treatments.every((a) => current.stoppedArms.some((s) => s.arm === a.id))) {
    throw new ConflictError(`experiment ${id} has every treatment arm stopped: extending it measures nothing (decide rollback)`);
  }
  const now = ports.now();
  const decision: ExperimentDecision = { kind: 'extend', reason, by, at: now.toISOString(), analysisId: analysis.analysisId, extendDays: days };
  const { record } = await updateExperiment(
    ports.records,
    id,
    (e) => {
      if (e.status === 'decided') throw new ConflictError(`experiment ${id} was decided meanwhile`);
      if (e.status === 'stopped' && !e.stopReason?.startsWith(MAX_DURATION_REACHED)) throw new ConflictError(`experiment ${id} was stopped meanwhile`);
      // A stopped experiment (its maximum duration reached) runs again; `stoppedAt` and `stopReason` go.
      const { stoppedAt: _stoppedAt, stopReason: _stopReason, ...rest } = e;
      return { ...rest, status: 'running', definition: { ...e.definition, maxDurationDays: e.definition.maxDurationDays + days } };
    },
    { change: 'extended', by, detail: { extendDays: days, maxDurationDays, reason, analysisId: analysis.analysisId, wasStatus: current.status } },
    now,
  );
  return { experiment: record, decision, changed: true };
}

function primarySummary(analysis: ExperimentAnalysis): string {
  const primary = analysis.metrics.find((m) => m.role === 'primary');
  if (!primary) return `Analysis ${analysis.analysisId}: no primary metric computed.`;
  return primary.comparisons
    .map((c) => `${primary.metric} ${c.arm} vs ${c.control}: ${pct(c.relativeLift)}${c.ci ? ` [${pct(c.ci.low)}, ${pct(c.ci.high)}]` : ''}, ${c.verdict} (${c.rule})`)
    .join('\n');
}
