/**
 * Experiments inside `npm start`, shaped like their AWS twins (`lib/experiments/infra/experiments.ts`):
 * - the schedule (EventBridge Scheduler → `experiments/schedule`): the stage's `experiments.schedule` on the local
 *   schedule runner (`lib/shared/cron-schedule.ts`), every tenant's running experiments analysed and acted on;
 *   `FLYWHEEL_SCHEDULE=off` turns it off;
 * - the event consumers (EventBridge rules → SQS → Lambda): a tail of the local event log hands `experiment.proposed`
 *   to the proposal consumer (a draft experiment) and `failure-modes.labelled` to the failure-mode metrics. The tail's
 *   cursor is a record, so events published while the runtime was down, or by the consumer thread (its own bus
 *   instance), are read too. An event that fails is tried again on the next tick, up to `maxReceiveCount` times, then
 *   skipped and logged as dead-lettered.
 *
 * @example
 * const experiments = startLocalExperiments(localPorts, { logger });
 * await experiments.close();
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { z } from 'zod';
import { getStageSettings, type ExperimentSettings } from '../../config/stages.ts';
import type { LocalPorts } from '../../drivers/local/local-ports.ts';
import { EVENT_SOURCE } from '../../ports/events.ts';
import { startCronSchedule, type CronSchedule } from '../../shared/cron-schedule.ts';
import { defineRecordCodec } from '../../shared/record-codec.ts';
import { EXPERIMENT_PROPOSED } from '../../training/runs/events.ts';
import { FAILURE_MODE_METRIC_EVENT_TYPES, handleFailureModeVerdicts } from '../consumers/failure-mode-metrics.ts';
import type { Notify } from '../decisions/experiment-notices.ts';
import { draftFromProposalEvent } from '../proposals/proposed-experiment-consumer.ts';
import { runExperimentScheduleForAllTenants, type ScheduleRun } from '../schedule/run-experiment-schedule.ts';

/** Where the tail stands in the local event log (`EXPERIMENTSLOCAL` / `EVENTCURSOR`). */
export const localExperimentsCursor = defineRecordCodec({
  kind: 'experiments event cursor',
  schema: z.object({ seq: z.number().int().nonnegative() }),
  keys: () => ({ pk: 'EXPERIMENTSLOCAL', sk: 'EVENTCURSOR' }),
});

/** The event types the local tail hands on. */
export const LOCAL_EXPERIMENT_EVENT_TYPES = [EXPERIMENT_PROPOSED, ...FAILURE_MODE_METRIC_EVENT_TYPES] as const;

export interface LocalExperimentsOptions {
  logger?: Logger;
  /** Default: on unless FLYWHEEL_SCHEDULE=off or the stage turns it off. */
  schedule?: boolean;
  settings?: ExperimentSettings;
  pollMs?: number;
  maxReceiveCount?: number;
  notify?: Notify;
}

export interface LocalExperiments {
  /** The running schedule, when on. */
  schedule?: CronSchedule;
  /** One schedule tick now, for every tenant (tests, `flywheel experiment analyze --all`). */
  tick(): Promise<ScheduleRun[]>;
  /** Reads the event log up to its end now (tests). */
  drain(): Promise<void>;
  close(): Promise<void>;
}

export function startLocalExperiments(ports: Omit<LocalPorts, 'close'>, options: LocalExperimentsOptions = {}): LocalExperiments {
  const settings = options.settings ?? getStageSettings('local').experiments;
  const logger = options.logger;
  const maxReceives = options.maxReceiveCount ?? 5;
  const withNotify = { ...ports, ...(options.notify ? { notify: options.notify } : {}) };

  // One tick at a time: a slow analysis never overlaps the next firing.
  let ticking: Promise<ScheduleRun[]> = Promise.resolve([]);
  const tick = () =>
    (ticking = ticking.catch(() => []).then(async () => {
      const runs = await runExperimentScheduleForAllTenants(withNotify);
      for (const run of runs) {
        if (run.error) logger?.error('experiments schedule: a tenant failed', { tenant: run.tenant, error: run.error });
        for (const e of run.experiments) {
          if (e.error) logger?.error('experiments schedule: an experiment failed', { tenant: run.tenant, experimentId: e.experimentId, error: e.error });
          else if (e.actions.some((a) => a.kind !== 'none')) logger?.info('experiments schedule acted', { tenant: run.tenant, experimentId: e.experimentId, actions: e.actions.map((a) => a.kind) });
        }
      }
      return runs;
    }));
  const scheduleOn = options.schedule ?? (process.env.FLYWHEEL_SCHEDULE !== 'off' && settings.schedule.enabled);
  const schedule = scheduleOn
    ? startCronSchedule(settings.schedule, async () => void (await tick()), { path: 'experiments.schedule.expression', onError: (error) => logger?.error('experiments schedule failed', { error: String(error) }) })
    : undefined;
  if (schedule) logger?.info('experiments schedule on', { expression: settings.schedule.expression, next: schedule.next().toISOString() });

  const failures = new Map<number, number>();
  const handle = async (type: string, body: string, detail: unknown) => {
    if (type === EXPERIMENT_PROPOSED) {
      const outcome = await draftFromProposalEvent(withNotify, body, { plannedUnitsPerArm: settings.proposalUnitsPerArm });
      if (outcome) logger?.info('experiment proposal handled', outcome.drafted ? { drafted: outcome.experiment.definition.id } : { drafted: false, reason: outcome.reason });
    } else {
      await handleFailureModeVerdicts(ports, [{ type, detail }]);
    }
  };
  const drainOnce = async () => {
    const { pk, sk } = { pk: 'EXPERIMENTSLOCAL', sk: 'EVENTCURSOR' };
    let seq = localExperimentsCursor.decodeIfPresent(await ports.records.get(pk, sk))?.seq ?? 0;
    for (;;) {
      const batch = ports.events.after(seq, { types: LOCAL_EXPERIMENT_EVENT_TYPES, limit: 100 });
      if (batch.length === 0) break;
      for (const e of batch) {
        const body = JSON.stringify({ version: '0', id: e.id, 'detail-type': e.type, source: EVENT_SOURCE, time: new Date(e.publishedAt).toISOString(), detail: e.detail });
        try {
          await handle(e.type, body, e.detail);
          failures.delete(e.seq);
        } catch (error) {
          const receives = (failures.get(e.seq) ?? 0) + 1;
          failures.set(e.seq, receives);
          if (receives < maxReceives) {
            logger?.warn('experiments: an event failed; trying again', { type: e.type, seq: e.seq, receives, error: error as Error });
            await ports.records.put(localExperimentsCursor.encode({ seq }));
            return;
          }
          logger?.error('experiments: an event dead-lettered after repeated failures', { type: e.type, seq: e.seq, receives, error: error as Error });
          failures.delete(e.seq);
        }
        seq = e.seq;
      }
      await ports.records.put(localExperimentsCursor.encode({ seq }));
    }
  };

  let running = true;
  let timer: NodeJS.Timeout | undefined;
  let polling: Promise<void> = Promise.resolve();
  // `drain` and the timer share one chain: no event is handled twice at once.
  let chain: Promise<void> = Promise.resolve();
  const run = () => (chain = chain.then(drainOnce).catch((error: unknown) => logger?.error('experiments: event tail failed', { error: error as Error })));
  const loop = () => {
    if (!running) return;
    polling = run().finally(() => {
      if (running) timer = setTimeout(loop, options.pollMs ?? 250);
    });
  };
  loop();

  return {
    ...(schedule ? { schedule } : {}),
    tick,
    async drain() {
      await polling;
      await run();
    },
    async close() {
      running = false;
      schedule?.stop();
      if (timer) clearTimeout(timer);
      await polling;
      await ticking.catch(() => undefined);
    },
  };
}
