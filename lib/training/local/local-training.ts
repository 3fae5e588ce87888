/**
 * Training runs in the local runtime (`npm start`): the training definition the CDK app synthesizes, run by the local
 * workflows driver (state in `train-workflows.sqlite` of the data folder), its steps in process, its policy job as a
 * child process of the local jobs driver (the job definition `trainer-policy`: `python3 -m flywheel_trainer
 * policy-job` in `batch-images/trainer/`, on CPU; the GPU queue maps to the local scheduler's `gpu` pool, whose slots
 * the runs share under the `training` category's fair share), and the heartbeat watch every minute
 * (`checkStalledRuns`, over these executions too: a run left non-terminal by an execution that ended is failed; on AWS
 * a scheduled Lambda).
 *
 * @example
 * const jobs = new LocalJobs({ dataDir, definitions: { [TRAINER_POLICY_JOB_DEFINITION]: localTrainerPolicyJobDefinition() } });
 * const training = startLocalTraining({ dataDir, ports, jobs, logger });
 * const workflows = training.route(sweeps.workflows); // the API's workflows port: train-policy here, the rest there
 * await training.close();
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { Logger } from '@aws-lambda-powertools/logger';
import { REPOSITORY_ROOT, type LocalJobDefinition } from '../../drivers/local/jobs/job-definitions.ts';
import { LocalWorkflows, type LocalWorkflowsOptions } from '../../drivers/local/local-workflows.ts';
import { openDatabase } from '../../drivers/local/sqlite-database.ts';
import type { LocalWorkflowSpec } from '../../drivers/local/workflows/workflow-spec.ts';
import { noticeNotifier } from '../../people/notices/notice-notifier.ts';
import type { JobsPort } from '../../ports/jobs.ts';
import type { Ports } from '../../ports/ports.ts';
import type { WorkflowsPort } from '../../ports/workflows.ts';
import { checkStalledRuns, type StallCheck } from '../runs/check-stalled-runs.ts';
import { TRAIN_WORKFLOW, trainDefinition, type TrainDefinitionArns } from '../workflow/train.asl.ts';
import { codeVersionFromEnv, dispatchTrainStep, type TrainStepPorts } from '../workflow/train-steps.ts';

/** The job definition name the policy trainer is known by (on Batch: the stage's `trainer-policy` job definition). */
export const TRAINER_POLICY_JOB_DEFINITION = 'trainer-policy';
/** Between two heartbeat checks of the local runtime. */
export const LOCAL_STALL_CHECK_MS = 60_000;

/** The policy trainer as a local job: the Python package in `batch-images/trainer/` (`FLYWHEEL_PYTHON`, default python3). */
export function localTrainerPolicyJobDefinition(env: NodeJS.ProcessEnv = process.env): LocalJobDefinition {
  return {
    command: [env.FLYWHEEL_PYTHON || 'python3', '-m', 'flywheel_trainer', 'policy-job'],
    cwd: join(REPOSITORY_ROOT, 'batch-images', 'trainer'),
    // No __pycache__ in the checkout.
    environment: { PYTHONDONTWRITEBYTECODE: '1' },
  };
}

/** The checkout's commit (`git rev-parse HEAD`, `+dirty` with local changes) for the lineage; else `FLYWHEEL_CODE_VERSION` or the package version. */
export function localCodeVersion(): string {
  if (process.env.FLYWHEEL_CODE_VERSION) return process.env.FLYWHEEL_CODE_VERSION;
  try {
    const git = (args: string[]) => execFileSync('git', args, { cwd: REPOSITORY_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 }).trim();
    const sha = git(['rev-parse', 'HEAD']);
    return git(['status', '--porcelain', '--untracked-files=no']) === '' ? sha : `${sha}+dirty`;
  } catch {
    // Not a git checkout (an unpacked release): the package version says what code it is.
    return codeVersionFromEnv();
  }
}

/** Placeholder ARNs of the local runtime. */
export function localTrainArns(): TrainDefinitionArns {
  return {
    stepFunction: 'arn:aws:lambda:local:000000000000:function:flywheel-train-step',
    gpuJobQueue: 'arn:aws:batch:local:000000000000:job-queue/flywheel-gpu',
    trainerJobDefinition: `arn:aws:batch:local:000000000000:job-definition/flywheel-${TRAINER_POLICY_JOB_DEFINITION}`,
  };
}

/** The training workflow for `LocalWorkflows`: its steps in process, its policy job on the local `gpu` pool. */
export function localTrainWorkflow(options: { ports: TrainStepPorts; jobs: JobsPort; pollMs?: number; jobDefinition?: string }): LocalWorkflowSpec {
  const arns = localTrainArns();
  return {
    definition: trainDefinition(arns),
    lambdas: { [arns.stepFunction]: (payload) => dispatchTrainStep(options.ports, payload) },
    batch: {
      jobs: options.jobs,
      queues: { [arns.gpuJobQueue]: 'gpu' },
      definitions: { [arns.trainerJobDefinition]: options.jobDefinition ?? TRAINER_POLICY_JOB_DEFINITION },
      ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
    },
  };
}

export interface LocalTrainingOptions {
  dataDir: string;
  ports: Pick<Ports, 'records' | 'blobs' | 'events' | 'now'>;
  jobs: JobsPort;
  logger: Logger;
  /** The sweeps' workflows port: the check-sweep step describes a checkpoint's sweep execution with it. */
  sweepWorkflows?: WorkflowsPort;
  /** Step overrides (a fake dataset builder, settings, notify) for tests. */
  steps?: Partial<Pick<TrainStepPorts, 'buildDataset' | 'settings' | 'notify'>>;
  /** The local job definition the policy job runs as (tests: a fake trainer); default `trainer-policy`. */
  jobDefinition?: string;
  pollMs?: number;
  /** Between heartbeat checks; default a minute; 0 turns the interval off (tests call `checkStalls`). */
  stallCheckMs?: number;
  workflows?: LocalWorkflowsOptions;
}

export interface LocalTraining {
  workflows: LocalWorkflows;
  /** A workflows port that runs `train-policy` here and hands every other workflow to `other` (the sweeps'). */
  route(other?: WorkflowsPort): WorkflowsPort;
  /** One heartbeat check now. */
  checkStalls(): Promise<StallCheck>;
  close(): Promise<void>;
}

/** Starts the training workflow and the heartbeat watch; resumes executions a crash left running. */
export function startLocalTraining(options: LocalTrainingOptions): LocalTraining {
  const { logger } = options;
  // Notices are raised (stored, deduplicated, then Slack and the bus): `lib/people/notices/`.
  const notify = options.steps?.notify ?? noticeNotifier(options.ports, 'training');
  const stepPorts: TrainStepPorts = {
    ...options.ports,
    jobs: options.jobs,
    ...(options.sweepWorkflows ? { workflows: options.sweepWorkflows } : {}),
    ...options.steps,
    // One node locally: the local jobs driver runs no multi-node parallel jobs. A local sweep is minutes, not hours: look every 10 s.
    // The trainer is the checkout's own Python package (no image): its code version is the checkout's.
    settings: { multiNode: false, sweepPollSeconds: 10, codeVersion: localCodeVersion(), trainerImage: 'local:batch-images/trainer', ...options.steps?.settings },
    notify,
  };
  const workflows = new LocalWorkflows(
    openDatabase(join(options.dataDir, 'train-workflows.sqlite')),
    {
      [TRAIN_WORKFLOW]: localTrainWorkflow({
        ports: stepPorts,
        jobs: options.jobs,
        ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
        ...(options.jobDefinition ? { jobDefinition: options.jobDefinition } : {}),
      }),
    },
    {
      onFinished: (e) => logger.info('training run execution finished', { name: e.name, status: e.status, ...(e.error ? { error: e.error } : {}) }),
      ...options.workflows,
    },
  );
  const resumed = workflows.resumeInterrupted();
  if (resumed.length > 0) logger.info('resumed interrupted training runs', { executions: resumed });
  // With the training executions: a run whose execution ended without ending the run is failed by the check.
  const checkStalls = () => checkStalledRuns({ ...options.ports, jobs: options.jobs, workflows }, notify);
  const every = options.stallCheckMs ?? LOCAL_STALL_CHECK_MS;
  let checking: Promise<unknown> | undefined;
  const timer =
    every > 0
      ? setInterval(() => {
          checking ??= checkStalls()
            .then((found) => found.stalled.length > 0 && logger.warn('training runs stalled', { runs: found.stalled }))
            .catch((error: unknown) => logger.error('training heartbeat check failed', { error: String(error) }))
            .finally(() => (checking = undefined));
        }, every)
      : undefined;
  timer?.unref();
  return {
    workflows,
    route: (other) => routeWorkflows(workflows, other),
    checkStalls,
    async close() {
      if (timer) clearInterval(timer);
      await checking;
      await workflows.close();
    },
  };
}

/** The workflow an execution id of the local drivers names (`arn:aws:states:local:…:execution:<workflow>:<name>`). */
function workflowOf(executionId: string): string | undefined {
  return executionId.split(':').at(-2);
}

/** `train-policy` to `train`, every other workflow to `other`. */
function routeWorkflows(train: LocalWorkflows, other: WorkflowsPort | undefined): WorkflowsPort {
  const pick = (workflow: string | undefined): WorkflowsPort => (workflow === TRAIN_WORKFLOW || !other ? train : other);
  return {
    start: (workflow, start) => pick(workflow).start(workflow, start),
    describe: (executionId) => pick(workflowOf(executionId)).describe(executionId),
    stop: (executionId, stop) => pick(workflowOf(executionId)).stop(executionId, stop),
  };
}
