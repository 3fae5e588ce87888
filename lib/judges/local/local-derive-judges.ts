/**
 * Judge derivations in the local runtime (`npm start`): the derivation definition the CDK app synthesizes, run by the
 * local workflows driver (state in `derive-workflows.sqlite` of the data folder), its steps in process, its trainer
 * job as a child process of the local jobs driver (`python3 -m flywheel_trainer job` in `batch-images/trainer/`),
 * and the trigger the AWS rule is: a subscriber to `checkpoint.registered` that starts a derivation for a top model.
 *
 * @example
 * const jobs = new LocalJobs({ dataDir, definitions: { ...localJobDefinitionsFromEnv(), trainer: localTrainerJobDefinition() } });
 * const derive = startLocalDerivations({ dataDir, ports, jobs, logger });
 * await derive.close();
 */
import { join } from 'node:path';
import type { Logger } from '@aws-lambda-powertools/logger';
import { REPOSITORY_ROOT, type LocalJobDefinition } from '../../drivers/local/jobs/job-definitions.ts';
import type { LocalEvents } from '../../drivers/local/local-events.ts';
import { LocalWorkflows, type LocalWorkflowsOptions } from '../../drivers/local/local-workflows.ts';
import { openDatabase } from '../../drivers/local/sqlite-database.ts';
import type { LocalWorkflowSpec } from '../../drivers/local/workflows/workflow-spec.ts';
import type { JobsPort } from '../../ports/jobs.ts';
import type { Ports } from '../../ports/ports.ts';
import { CHECKPOINT_REGISTERED } from '../../registry/register-checkpoint.ts';
import { defaultJudgeRunners, deriveSettingsFromEnv, type DeriveSettings, type JudgeRunners } from '../derive/judge-runners.ts';
import { DERIVE_WORKFLOW, deriveJudgesDefinition, type DeriveDefinitionArns } from '../workflow/derive-judges.asl.ts';
import { dispatchDeriveStep, type DeriveStepPorts } from '../workflow/derive-steps.ts';
import { startDerivationFromTrigger } from '../workflow/start-derivation-from-trigger.ts';

/** The job definition name the trainer image is known by (on Batch: the stage's `trainer` job definition). */
export const TRAINER_JOB_DEFINITION = 'trainer';

/** The trainer as a local job: the Python package in `batch-images/trainer/` (`FLYWHEEL_PYTHON`, default python3). */
export function localTrainerJobDefinition(env: NodeJS.ProcessEnv = process.env): LocalJobDefinition {
  return {
    command: [env.FLYWHEEL_PYTHON || 'python3', '-m', 'flywheel_trainer', 'job'],
    cwd: join(REPOSITORY_ROOT, 'batch-images', 'trainer'),
    // No __pycache__ in the checkout.
    environment: { PYTHONDONTWRITEBYTECODE: '1' },
  };
}

/** Placeholder ARNs of the local runtime. */
export function localDeriveArns(): DeriveDefinitionArns {
  return {
    stepFunction: 'arn:aws:lambda:local:000000000000:function:flywheel-derive-judges-step',
    cpuJobQueue: 'arn:aws:batch:local:000000000000:job-queue/flywheel-cpu',
    trainerJobDefinition: `arn:aws:batch:local:000000000000:job-definition/flywheel-${TRAINER_JOB_DEFINITION}`,
  };
}

export function localDeriveWorkflow(options: { ports: DeriveStepPorts; jobs: JobsPort; pollMs?: number }): LocalWorkflowSpec {
  const arns = localDeriveArns();
  return {
    definition: deriveJudgesDefinition(arns),
    lambdas: { [arns.stepFunction]: (payload) => dispatchDeriveStep(options.ports, payload) },
    batch: {
      jobs: options.jobs,
      queues: { [arns.cpuJobQueue]: 'cpu' },
      definitions: { [arns.trainerJobDefinition]: TRAINER_JOB_DEFINITION },
      ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
    },
  };
}

export interface LocalDerivationsOptions {
  dataDir: string;
  ports: Pick<Ports, 'records' | 'blobs' | 'now'> & { events: LocalEvents };
  jobs: JobsPort;
  logger: Logger;
  settings?: DeriveSettings;
  runners?: JudgeRunners;
  notify?: DeriveStepPorts['notify'];
  pollMs?: number;
  workflows?: LocalWorkflowsOptions;
}

export interface LocalDerivations {
  workflows: LocalWorkflows;
  close(): Promise<void>;
}

/** Starts the derivation workflow and its `checkpoint.registered` trigger; resumes executions a crash left running. */
export function startLocalDerivations(options: LocalDerivationsOptions): LocalDerivations {
  const settings = options.settings ?? deriveSettingsFromEnv();
  const stepPorts: DeriveStepPorts = {
    ...options.ports,
    runners: options.runners ?? defaultJudgeRunners(options.ports, settings),
    settings,
    ...(options.notify ? { notify: options.notify } : {}),
  };
  const { logger } = options;
  const workflows = new LocalWorkflows(
    openDatabase(join(options.dataDir, 'derive-workflows.sqlite')),
    { [DERIVE_WORKFLOW]: localDeriveWorkflow({ ports: stepPorts, jobs: options.jobs, ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}) }) },
    {
      onFinished: (e) => logger.info('judge derivation finished', { name: e.name, status: e.status, ...(e.error ? { error: e.error } : {}) }),
      ...options.workflows,
    },
  );
  const resumed = workflows.resumeInterrupted();
  if (resumed.length > 0) logger.info('resumed interrupted judge derivations', { executions: resumed });
  const stop = options.ports.events.subscribe(CHECKPOINT_REGISTERED, async (event) => {
    try {
      const started = await startDerivationFromTrigger({ workflows }, { 'detail-type': CHECKPOINT_REGISTERED, detail: event.detail as Record<string, unknown> });
      if (started) logger.info('judge derivation started for a top checkpoint', started);
    } catch (error) {
      logger.error('checkpoint.registered did not start a judge derivation', { error: String(error) });
    }
  });
  return {
    workflows,
    async close() {
      stop();
      await workflows.close();
    },
  };
}
