/**
 * Scenario 5: the ramp rolls back a guardrail breach, through the real path. An experiment ramps 5% → 25% → 50% of
 * users (each step holding `hoursPerStep`), its treatment's turns are `regression` (20%) slower. Day by simulated day:
 * - users visit; each asks `assignUnit` (the assignment API's answer: ramp share, arm, stopped arms) and, when it says
 *   `assigned`, is served: one exposure row and one `latency_ms` row per turn, an `accepted` row per successful turn;
 * - the day's rows are written to the raw archive (`writeExposureRows` / `writeMetricRows`, JSON Lines under
 *   `raw/…/tenant=default/dt=<day>/` in a temporary data folder);
 * - at the day's end the schedule runs (`runExperimentSchedule`): `analyzeExperiment` over DuckDB (the same SQL as
 *   Athena), `planExperimentAction`, and the actions applied to the stored experiment (stop the arm and tell people,
 *   widen the ramp, stop).
 * What it reports per day: the ramp step, units per arm, the guardrail's lift and always-valid interval, whether the
 * analysis saw the breach, and what the schedule did. The claim: the arm is stopped at the first analysis where the
 * breach is visible, and the ramp never widens past it.
 *
 * @example
 * const result = await simulateRampRollback({ seed: 1, dataDir: '/tmp/sim-ramp', users: 20_000 });
 * result.stoppedAt; // { day: 1, rampStep: 1, percent: 25 }
 */
import { join } from 'node:path';
import { DuckDbQuery } from '../../lib/drivers/local/duckdb-query.ts';
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { analyzeExperiment, type AnalysisPorts } from '../../lib/experiments/analysis/analyze-experiment.ts';
import { writeExposureRows, writeMetricRows } from '../../lib/experiments/archive/write-archive-rows.ts';
import { assignUnit } from '../../lib/experiments/assignment/assign-unit.ts';
import { createExperiment } from '../../lib/experiments/create-experiment.ts';
import type { PlannedAction } from '../../lib/experiments/decisions/plan-experiment-action.ts';
import { getExperiment, listChanges } from '../../lib/experiments/experiment-store.ts';
import { archiveKeys } from '../../lib/experiments/record-keys.ts';
import { runExperimentSchedule } from '../../lib/experiments/schedule/run-experiment-schedule.ts';
import type { ExperimentAnalysis, ExposureRow, MetricRow } from '../../lib/experiments/schemas.ts';
import { startExperiment } from '../../lib/experiments/start-experiment.ts';
import { registerCheckpoint } from '../../lib/registry/register-checkpoint.ts';
import { SeededRandom } from './seeded-random.ts';
import { DEFAULT_USER_MODEL, drawPeriod, drawUser, type SimUser, type UserModel } from './user-model.ts';

const TENANT = 'default';
const HOUR_MS = 60 * 60 * 1000;
export const RAMP_EXPERIMENT_ID = 'sim-ramp-latency';
export const LATENCY_GUARDRAIL = 'latency_ms_per_turn';

/** Latency-like turns: median 1.5 s, heavy users a little faster. */
export const LATENCY_USER_MODEL: UserModel = { ...DEFAULT_USER_MODEL, logScale: Math.log(1500) };

export interface RampOptions {
  seed: number;
  /** An empty folder for the local ports (records, blobs) the scenario runs over. */
  dataDir: string;
  /** Users in the population. */
  users: number;
  /** Share of users who visit on a given day. Default 0.6. */
  visitShare?: number;
  /** Relative latency regression of the treatment. Default 0.2. */
  regression?: number;
  /** The guardrail's tolerated regression. Default 0.05. */
  maxRegression?: number;
  /** Ramp percents. Default 5, 25, 50. */
  ramp?: number[];
  hoursPerStep?: number;
  /** The planned sample (the sequential interval's tuning). Default 5000. */
  plannedUnitsPerArm?: number;
  /** Days simulated at most (the scenario ends when the experiment stops). Default 6. */
  days?: number;
  model?: UserModel;
  start?: Date;
}

export interface RampDay {
  day: number;
  /** The ramp step in force while the day's traffic was served. */
  rampStep: number;
  percent: number;
  /** Units served the treatment that day (turns they had, too). */
  treatmentUnitsServed: number;
  treatmentTurnsServed: number;
  unitsPerArm: Record<string, number>;
  guardrail: { relativeLift: number | null; sequentialCi: { low: number; high: number } | null; verdict: string; breached: boolean };
  srmMismatch: boolean;
  actions: PlannedAction[];
  analysisId: string;
  queryMs: number;
}

export interface RampResult {
  users: number;
  regression: number;
  maxRegression: number;
  ramp: number[];
  days: RampDay[];
  /** Where the treatment was stopped (undefined: never). */
  stoppedAt?: { day: number; rampStep: number; percent: number; reason: string };
  /** The first analysis whose guardrail comparison showed the breach. */
  firstBreachDay?: number;
  /** The widest ramp step reached. */
  widestStep: number;
  /** The experiment as stored at the end, and its history. */
  finalStatus: string;
  stoppedArms: string[];
  changes: string[];
  /** Alerts people were sent (titles). */
  alerts: string[];
  /** Treatment turns served in all (the regression's reach before the rollback). */
  treatmentTurnsServed: number;
  /** Users `assignUnit` still sends to the treatment once the experiment is as stored at the end (0 after a rollback). */
  treatmentAssignmentsAfter: number;
}

interface PopulationUser {
  id: string;
  user: SimUser;
}

/**
 * Runs the ramp scenario over the local ports in `options.dataDir`.
 *
 * @example
 * const { stoppedAt, widestStep } = await simulateRampRollback({ seed: 1, dataDir, users: 20_000 });
 */
export async function simulateRampRollback(options: RampOptions): Promise<RampResult> {
  const visitShare = options.visitShare ?? 0.6;
  const regression = options.regression ?? 0.2;
  const maxRegression = options.maxRegression ?? 0.05;
  const ramp = options.ramp ?? [5, 25, 50];
  const hoursPerStep = options.hoursPerStep ?? 24;
  const model = options.model ?? LATENCY_USER_MODEL;
  const start = options.start ?? new Date('2026-11-02T00:00:00.000Z');
  let clock = start;
  const now = () => clock;
  const ports = openLocalPorts(options.dataDir, { now });
  const query = await DuckDbQuery.open(join(options.dataDir, 'blobs'));
  const alerts: string[] = [];
  try {
    for (const [id, model] of [['sim:incumbent', 'coder'], ['sim:candidate', 'coder']] as const) {
      await registerCheckpoint(ports, { id, model, serving: { kind: 'endpoint', model: `openai:${model}@http://127.0.0.1:9/v1` }, sweep: false });
    }
    await createExperiment(
      ports,
      {
        id: RAMP_EXPERIMENT_ID,
        name: 'Candidate vs incumbent, ramped',
        arms: [
          { id: 'control', checkpoint: 'sim:incumbent', control: true },
          { id: 'treatment', checkpoint: 'sim:candidate' },
        ],
        metrics: { primary: 'accepted', guardrails: [{ metric: LATENCY_GUARDRAIL, maxRegression }] },
        plannedUnitsPerArm: options.plannedUnitsPerArm ?? 5000,
        stoppingRule: { kind: 'sequential' },
        ramp: ramp.map((percent) => ({ percent, minHours: hoursPerStep })),
        cupedPreDays: 0,
      },
      { kind: 'person', by: 'simulation' },
    );
    await startExperiment(ports, RAMP_EXPERIMENT_ID, 'simulation');

    const root = new SeededRandom(options.seed);
    const populationRandom = root.fork('population');
    const population: PopulationUser[] = Array.from({ length: options.users }, (_, i) => ({ id: `user-${i}`, user: drawUser(populationRandom, model) }));
    const days: RampDay[] = [];
    let treatmentTurnsServed = 0;
    const maxDays = options.days ?? 6;
    const analysisPorts: AnalysisPorts = { records: ports.records, blobs: ports.blobs, query, now };
    for (let day = 0; day < maxDays; day++) {
      const experiment = await getExperiment(ports.records, RAMP_EXPERIMENT_ID);
      if (experiment.status !== 'running') break;
      const dayStart = start.getTime() + day * hoursPerStep * HOUR_MS;
      const random = root.fork(`day-${day}`);
      const exposures: ExposureRow[] = [];
      const metrics: MetricRow[] = [];
      let treatmentUnits = 0;
      let treatmentTurns = 0;
      for (const { id, user } of population) {
        if (!random.bernoulli(visitShare)) continue;
        const assignment = assignUnit(experiment, id);
        if (!assignment.logExposure) continue;
        const treated = assignment.arm === 'treatment';
        // The visit starts somewhere in the first 20 hours of the day; turns a minute apart.
        const visitAt = dayStart + Math.floor(random.uniform() * 20 * HOUR_MS);
        let turn = 0;
        drawPeriod(random, model, user, treated ? { valueLift: regression } : {}, {
          onTurn: (latency, succeeded) => {
            const at = new Date(visitAt + turn * 60_000).toISOString();
            const turnId = `${id}-d${day}-t${turn}`;
            const common = { session_id: `${id}-d${day}`, turn_id: turnId, occurred_at: at, received_at: at };
            exposures.push({ id: `x-${turnId}`, experiment: RAMP_EXPERIMENT_ID, arm: assignment.arm, checkpoint: assignment.checkpoint, unit_type: 'user', unit_id: id, ...common });
            const metric = { user_id: id, workspace_id: null, model: assignment.checkpoint, experiment: RAMP_EXPERIMENT_ID, arm: assignment.arm, scope: 'turn' as const, ...common };
            metrics.push({ id: `m-${turnId}`, metric: 'latency_ms', value: Math.round(latency), ...metric });
            if (succeeded) metrics.push({ id: `a-${turnId}`, metric: 'accepted', value: 1, ...metric });
            turn++;
          },
        });
        if (treated) {
          treatmentUnits++;
          treatmentTurns += turn;
        }
      }
      const dt = new Date(dayStart).toISOString().slice(0, 10);
      await writeExposureRows(ports.blobs, TENANT, archiveKeys.exposures(TENANT, dt, `sim-${day}`), exposures);
      await writeMetricRows(ports.blobs, TENANT, archiveKeys.metrics(TENANT, dt, `sim-${day}`), metrics);
      treatmentTurnsServed += treatmentTurns;

      // The schedule's tick at the end of the step's hours.
      clock = new Date(dayStart + hoursPerStep * HOUR_MS);
      let analysis: ExperimentAnalysis | undefined;
      let analysisError: unknown;
      const run = await runExperimentSchedule(
        { ...analysisPorts, events: ports.events, notify: async (notice) => alerts.push(notice.title) },
        {
          analyze: async (p, id) => {
            try {
              return (analysis = await analyzeExperiment(p, id));
            } catch (error) {
              // The schedule keeps only the message; the scenario fails with the stack.
              analysisError = error;
              throw error;
            }
          },
        },
      );
      if (analysisError) throw analysisError;
      const outcome = run.experiments.find((e) => e.experimentId === RAMP_EXPERIMENT_ID);
      if (!outcome || outcome.error || !analysis) throw new Error(`the schedule failed on day ${day}: ${outcome?.error ?? 'no outcome'}`);
      const guardrail = analysis.metrics.find((m) => m.metric === LATENCY_GUARDRAIL && m.role === 'guardrail');
      const comparison = guardrail?.comparisons.find((c) => c.arm === 'treatment');
      days.push({
        day,
        rampStep: experiment.rampStep,
        percent: ramp[experiment.rampStep]!,
        treatmentUnitsServed: treatmentUnits,
        treatmentTurnsServed: treatmentTurns,
        unitsPerArm: analysis.unitsPerArm,
        guardrail: {
          relativeLift: comparison?.relativeLift ?? null,
          sequentialCi: comparison?.sequentialCi ?? null,
          verdict: comparison?.verdict ?? 'missing',
          breached: guardrail?.guardrailBreached === true,
        },
        srmMismatch: analysis.srm.mismatch,
        actions: outcome.actions,
        analysisId: analysis.analysisId,
        queryMs: analysis.queryMs,
      });
    }

    const final = await getExperiment(ports.records, RAMP_EXPERIMENT_ID);
    const changes = await listChanges(ports.records, RAMP_EXPERIMENT_ID);
    const stopDay = days.find((d) => d.actions.some((a) => a.kind === 'stop-arm' && a.arm === 'treatment'));
    const stopAction = stopDay?.actions.find((a): a is Extract<PlannedAction, { kind: 'stop-arm' }> => a.kind === 'stop-arm');
    const widened = days.flatMap((d) => d.actions.filter((a): a is Extract<PlannedAction, { kind: 'widen-ramp' }> => a.kind === 'widen-ramp').map((a) => a.toStep));
    return {
      users: options.users,
      regression,
      maxRegression,
      ramp,
      days,
      ...(stopDay && stopAction ? { stoppedAt: { day: stopDay.day, rampStep: stopDay.rampStep, percent: stopDay.percent, reason: stopAction.reason } } : {}),
      ...(days.find((d) => d.guardrail.breached) ? { firstBreachDay: days.find((d) => d.guardrail.breached)!.day } : {}),
      widestStep: Math.max(0, ...widened),
      finalStatus: final.status,
      stoppedArms: final.stoppedArms.map((s) => `${s.arm} (${s.reason})`),
      changes: changes.map((c) => c.change),
      alerts,
      treatmentTurnsServed,
      treatmentAssignmentsAfter: population.filter(({ id }) => assignUnit(final, id).arm === 'treatment').length,
    };
  } finally {
    await query.close();
    ports.close();
  }
}
