/**
 * Sweeps in the local runtime (`npm start`): the local workflows driver running the sweep definition the CDK app
 * synthesizes (state in `workflows.sqlite` of the data folder), the sweep steps of `lib/sweeps/`, the local jobs
 * driver for the shards' Batch jobs, and the two automatic triggers the Workflows stack deploys: the stage's schedule
 * (off with `FLYWHEEL_SCHEDULE=off`) and a subscription to `checkpoint.registered` on the local bus. Executions a
 * previous run left RUNNING (a crash, Ctrl-C) are resumed at start.
 *
 * @example
 * const sweeps = startLocalSweeps({ dataDir, ports, jobs, logger });
 * ports.workflows = sweeps.workflows; // `POST /v1/sweeps`, `flywheel sweep start`
 */
import { join } from 'node:path';
import type { Logger } from '@aws-lambda-powertools/logger';
import { getStageSettings } from '../../config/stages.ts';
import type { LocalEvents } from '../../drivers/local/local-events.ts';
import { LocalWorkflows } from '../../drivers/local/local-workflows.ts';
import { openDatabase } from '../../drivers/local/sqlite-database.ts';
import type { JobsPort } from '../../ports/jobs.ts';
import type { SweepStepPorts, SweepSteps } from '../workflow/sweep-steps.ts';
import { sweepStepHandlers } from '../sweep-step-handlers.ts';
import { sweepSettingsFromEnv } from '../sweep-settings.ts';
import { CHECKPOINT_REGISTERED } from '../../registry/register-checkpoint.ts';
import { localSweepWorkflow } from './local-sweep-workflow.ts';
import { startCronSchedule, type CronSchedule } from '../../shared/cron-schedule.ts';
import { SWEEP_WORKFLOW } from '../workflow/sweep.asl.ts';
import { startSweepFromTrigger } from '../workflow/start-sweep-from-trigger.ts';

export interface LocalSweepsOptions {
  dataDir: string;
  ports: SweepStepPorts & { events: LocalEvents };
  jobs: JobsPort;
  logger: Logger;
  steps?: SweepSteps;
  /** Default: on unless FLYWHEEL_SCHEDULE=off. */
  schedule?: boolean;
  /** Between DescribeJobs polls of a running shard; default 1000 ms. */
  pollMs?: number;
}

export interface LocalSweeps {
  workflows: LocalWorkflows;
  /** The running schedule, when on. */
  schedule?: CronSchedule;
  /** Stops the triggers and the running executions (left RUNNING, resumed by the next start). */
  close(): Promise<void>;
}

export function startLocalSweeps(options: LocalSweepsOptions): LocalSweeps {
  const { ports, logger } = options;
  const settings = sweepSettingsFromEnv({ ...process.env, FLYWHEEL_STAGE: 'local' });
  const workflows = new LocalWorkflows(
    openDatabase(join(options.dataDir, 'workflows.sqlite')),
    { [SWEEP_WORKFLOW]: localSweepWorkflow({ steps: options.steps ?? sweepStepHandlers({ settings }), ports, jobs: options.jobs, ...(options.pollMs ? { pollMs: options.pollMs } : {}) }) },
    { onFinished: (e) => logger.info('workflow execution finished', { workflow: e.workflow, name: e.name, status: e.status, ...(e.error ? { error: e.error } : {}) }) },
  );
  const resumed = workflows.resumeInterrupted();
  if (resumed.length > 0) logger.info('resumed interrupted workflow executions', { executions: resumed });

  const triggerPorts = { records: ports.records, now: ports.now, events: ports.events, workflows };
  const report = (what: string) => (error: unknown) => logger.error(`${what} did not start a sweep`, { error: String(error) });
  const stopCheckpoints = ports.events.subscribe(CHECKPOINT_REGISTERED, async (event) => {
    const started = await startSweepFromTrigger(triggerPorts, { 'detail-type': 'checkpoint.registered', detail: event.detail as { checkpointId: string; sweep?: boolean } }, settings).catch(report('checkpoint.registered'));
    if (started && 'refused' in started) logger.warn('sweep refused for a registered checkpoint', started.refused);
    else if (started) logger.info('sweep started for a registered checkpoint', { sweepId: started.sweepId });
  });

  const scheduleSetting = getStageSettings('local').sweepSchedule;
  const scheduleOn = options.schedule ?? (process.env.FLYWHEEL_SCHEDULE !== 'off' && scheduleSetting.enabled);
  const schedule = scheduleOn
    ? startCronSchedule(
        scheduleSetting,
        async (at) => {
          const started = await startSweepFromTrigger(triggerPorts, { trigger: 'schedule', scheduledTime: at.toISOString() }, settings);
          if (started && 'refused' in started) logger.warn('scheduled sweep refused', started.refused);
          else if (started) logger.info('scheduled sweep started', { sweepId: started.sweepId });
        },
        { onError: report('the schedule') },
      )
    : undefined;
  if (schedule) logger.info('sweep schedule on', { expression: scheduleSetting.expression, next: schedule.next().toISOString() });

  return {
    workflows,
    ...(schedule ? { schedule } : {}),
    async close() {
      schedule?.stop();
      stopCheckpoints();
      await workflows.close();
    },
  };
}
