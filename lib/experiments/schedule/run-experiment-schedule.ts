/**
 * The experiments' schedule (EventBridge Scheduler on AWS, the local schedule runner under `npm start`): every running
 * experiment is analysed (`analyzeExperiment`, which stores the snapshot), then acted on as `planExperimentAction`
 * says:
 * - a guardrail breach or a sample-ratio mismatch stops the arm at once (`stoppedArms`; the history says `rolled-back`
 *   when the arm was still ramping, `arm-stopped` otherwise) and tells people at once (severity alert, with the numbers);
 * - a ramp step that held its `minHours` with guardrails holding widens (`ramped`);
 * - past `maxDurationDays`, or with every treatment arm stopped, the experiment stops and people are asked to decide.
 * A rerun (after a crash, or the next tick) repeats nothing: each change is conditional on the state it changes, and
 * each notice and event has a stable id, sent once (`sendOnce`) and before the change it announces, so a tick that
 * died between the two sends nothing again and makes the change.
 *
 * Tenants: the schedule runs for the default tenant and every tenant an API key names (the key records are the one
 * list of tenants there is).
 */
import { listApiKeys } from '../../auth/api-keys.ts';
import { DEFAULT_TENANT } from '../../auth/scopes.ts';
import { scopePortsToTenant } from '../../auth/tenant-ports.ts';
import type { Ports } from '../../ports/ports.ts';
import type { QueryPort } from '../../ports/query.ts';
import { analyzeExperiment, type AnalysisPorts } from '../analysis/analyze-experiment.ts';
import { EXPERIMENT_ARM_STOPPED, EXPERIMENT_RAMPED, EXPERIMENT_STOPPED, notifierOf, type Notify } from '../decisions/experiment-notices.ts';
import { planExperimentAction, type PlannedAction } from '../decisions/plan-experiment-action.ts';
import { listExperiments, updateExperiment } from '../experiment-store.ts';
import type { ExperimentAnalysis, ExperimentRecord } from '../schemas.ts';
import { sendOnce } from './notice-once.ts';

/** Who the history names for the schedule's changes. */
export const SCHEDULE_ACTOR = 'schedule';

export type SchedulePorts = AnalysisPorts & Pick<Ports, 'events'> & { notify?: Notify };

export interface ScheduleOptions {
  /** The analysis (default `analyzeExperiment`, storing its snapshot); the simulation hands its own. */
  analyze?: (ports: AnalysisPorts, experimentId: string) => Promise<ExperimentAnalysis>;
}

export interface ExperimentScheduleOutcome {
  experimentId: string;
  analysisId?: string;
  actions: PlannedAction[];
  /** The analysis or an action failed: the rest of the experiments still ran. */
  error?: string;
}

export interface ScheduleRun {
  tenant: string;
  experiments: ExperimentScheduleOutcome[];
  /** The tenant's run failed before its experiments (listing them): the other tenants still ran. */
  error?: string;
}

/**
 * One tick for one tenant's ports: every running experiment analysed and acted on.
 *
 * @example
 * const run = await runExperimentSchedule(tenantPorts);
 * // { tenant: 'default', experiments: [{ experimentId: 'exp-1', analysisId: 'an-…', actions: [{ kind: 'widen-ramp', toStep: 1 }] }] }
 */
export async function runExperimentSchedule(ports: SchedulePorts, options: ScheduleOptions = {}): Promise<ScheduleRun> {
  const analyze = options.analyze ?? ((p: AnalysisPorts, id: string) => analyzeExperiment(p, id));
  const running: ExperimentRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await listExperiments(ports.records, { status: 'running', limit: 100, ...(cursor ? { cursor } : {}) });
    running.push(...page.items);
    cursor = page.cursor;
  } while (cursor);

  const outcomes: ExperimentScheduleOutcome[] = [];
  for (const experiment of running) {
    const experimentId = experiment.definition.id;
    try {
      const analysis = await analyze(ports, experimentId);
      // Planned on the record as listed; each change below is conditional on the record as it is when written.
      const actions = planExperimentAction(experiment, analysis, ports.now());
      await applyActions(ports, experiment, analysis, actions);
      outcomes.push({ experimentId, analysisId: analysis.analysisId, actions });
    } catch (error) {
      outcomes.push({ experimentId, actions: [], error: (error as Error).message });
    }
  }
  return { tenant: ports.query.tenant, experiments: outcomes };
}

/**
 * One tick for every tenant: the default one and each an API key names, each over its own view of the ports.
 *
 * @example
 * const runs = await runExperimentScheduleForAllTenants(rootPorts); // [{ tenant: 'default', … }, { tenant: 'acme', … }]
 */
export async function runExperimentScheduleForAllTenants(
  ports: Ports & { query: QueryPort; notify?: Notify },
  options: ScheduleOptions = {},
): Promise<ScheduleRun[]> {
  const tenants = new Set([DEFAULT_TENANT]);
  for (const key of await listApiKeys(ports.records)) tenants.add(key.tenant);
  const runs: ScheduleRun[] = [];
  for (const tenant of [...tenants].sort()) {
    const scoped = scopePortsToTenant(ports, tenant);
    // `scopePortsToTenant` hands the tenant's query view; an older one without it is scoped here.
    const query = scoped.query && scoped.query.tenant === tenant ? scoped.query : ports.query.forTenant(tenant);
    try {
      runs.push(await runExperimentSchedule({ ...scoped, query, ...(ports.notify ? { notify: ports.notify } : {}) }, options));
    } catch (error) {
      runs.push({ tenant, experiments: [], error: (error as Error).message });
    }
  }
  return runs;
}

async function applyActions(ports: SchedulePorts, listed: ExperimentRecord, analysis: ExperimentAnalysis, actions: PlannedAction[]): Promise<void> {
  const id = listed.definition.id;
  const send = { records: ports.records, events: ports.events, notify: notifierOf(ports.notify, ports) };
  // Each notice goes out before the change it announces: a tick that dies between the two plans the same action on
  // the next tick, whose notice is then already marked sent, and makes the change. People hear at once, and once.
  for (const action of actions) {
    const now = ports.now();
    if (action.kind === 'stop-arm') {
      const ramping = listed.definition.ramp.length > 1 && listed.rampStep < listed.definition.ramp.length - 1;
      await sendOnce(
        send,
        id,
        {
          id: `${EXPERIMENT_ARM_STOPPED}:${id}:${action.arm}`,
          kind: 'failure',
          severity: 'alert',
          link: `/experiments/${encodeURIComponent(id)}`,
          source: { capability: 'experiments', runKind: 'experiment', runId: id },
          title: `Experiment ${id}: arm ${action.arm} stopped (${action.reason === 'srm' ? 'sample-ratio mismatch' : 'guardrail breach'})${ramping ? ', ramp rolled back' : ''}`,
          text: `${action.detail}\nIts units are served the control from now on. Analysis ${analysis.analysisId}.`,
          fields: { experiment: id, arm: action.arm, reason: action.reason, analysis: analysis.analysisId },
        },
        { type: EXPERIMENT_ARM_STOPPED, detail: { experimentId: id, arm: action.arm, reason: action.reason, analysisId: analysis.analysisId, rolledBack: ramping } },
        now,
      );
      await updateExperiment(
        ports.records,
        id,
        (e) =>
          e.status !== 'running' || e.stoppedArms.some((s) => s.arm === action.arm)
            ? undefined
            : { ...e, stoppedArms: [...e.stoppedArms, { arm: action.arm, reason: action.reason, at: now.toISOString(), analysisId: analysis.analysisId, detail: action.detail.slice(0, 2000) }] },
        { change: ramping ? 'rolled-back' : 'arm-stopped', by: SCHEDULE_ACTOR, detail: { arm: action.arm, reason: action.reason, analysisId: analysis.analysisId, detail: action.detail, rampStep: listed.rampStep } },
        now,
      );
    } else if (action.kind === 'widen-ramp') {
      const step = listed.definition.ramp[action.toStep]!;
      await sendOnce(
        send,
        id,
        { id: `${EXPERIMENT_RAMPED}:${id}:${action.toStep}`, severity: 'info', title: `Experiment ${id} widened to ${step.percent}% of units`, text: `Guardrails held for the step before. Analysis ${analysis.analysisId}.`, fields: { experiment: id, step: action.toStep, percent: step.percent } },
        { type: EXPERIMENT_RAMPED, detail: { experimentId: id, toStep: action.toStep, percent: step.percent, analysisId: analysis.analysisId } },
        now,
      );
      await updateExperiment(
        ports.records,
        id,
        (e) => (e.status !== 'running' || e.rampStep !== action.toStep - 1 ? undefined : { ...e, rampStep: action.toStep, rampStepSince: now.toISOString() }),
        { change: 'ramped', by: SCHEDULE_ACTOR, detail: { fromStep: action.toStep - 1, toStep: action.toStep, percent: step.percent, analysisId: analysis.analysisId } },
        now,
      );
    } else if (action.kind === 'stop') {
      const armsStopped = actions.some((a) => a.kind === 'stop-arm') || listed.stoppedArms.length > 0;
      await sendOnce(
        send,
        id,
        {
          id: `${EXPERIMENT_STOPPED}:${id}`,
          kind: 'decision',
          severity: armsStopped ? 'alert' : 'warning',
          link: `/experiments/${encodeURIComponent(id)}`,
          source: { capability: 'experiments', runKind: 'experiment', runId: id },
          // Answered in Slack, the console or `flywheel notices answer`: the same decision as POST /v1/experiments/{id}/decide.
          actions: [
            { id: 'ship', label: 'Ship', style: 'primary', operation: { kind: 'decide-experiment', experimentId: id, decision: 'ship' } },
            { id: 'rollback', label: 'Roll back', style: 'danger', operation: { kind: 'decide-experiment', experimentId: id, decision: 'rollback' } },
            { id: 'extend', label: 'Extend 7 days', operation: { kind: 'decide-experiment', experimentId: id, decision: 'extend' } },
          ],
          title: `Experiment ${id} stopped: decide`,
          text: `${action.reason}.\nDecide with \`flywheel experiment decide ${id} --kind ship|rollback|extend --reason "…"\` (ship names \`--arm\`, extend \`--extend-days\`). Analysis ${analysis.analysisId}: ${analysis.recommendation.action}${analysis.recommendation.arm ? ` ${analysis.recommendation.arm}` : ''} (${analysis.recommendation.because}).`,
          fields: { experiment: id, analysis: analysis.analysisId, recommendation: analysis.recommendation.action },
        },
        { type: EXPERIMENT_STOPPED, detail: { experimentId: id, reason: action.reason, analysisId: analysis.analysisId } },
        now,
      );
      await updateExperiment(
        ports.records,
        id,
        (e) => (e.status !== 'running' ? undefined : { ...e, status: 'stopped', stoppedAt: now.toISOString(), stopReason: action.reason }),
        { change: 'stopped', by: SCHEDULE_ACTOR, detail: { reason: action.reason, analysisId: analysis.analysisId } },
        now,
      );
    }
  }
}
