/**
 * The training workflow, as a definition factory: ARNs in, Amazon States Language (JSONPath) out. The CDK construct
 * passes tokens; the local runtime passes placeholders (`localTrainArns()`) and runs the same JSON with
 * `aws-local-stepfunctions`. One Lambda runs every step (`functions/training/train-step.ts` → `dispatchTrainStep`):
 * the payload names the step. Input: `{ runId }` (and `resume: n` for the n-th resume; the steps read the run record).
 *
 * ```
 * BuildDataset → AlreadyRegistered ─ checkpoint registered (a resume after registration) → SkipToSweep → SweepRequested
 *   → PrepareTrain → TrainShape ─ nodes = 1 → Train           (Batch .sync, GPU queue, share `training`)
 *                                          └ nodes > 1 → TrainMultiNode  (the same, NodeOverrides: a multi-node parallel job)
 *   → RegisterCheckpoint (lineage; the checkpoint.registered trigger starts its sweep)
 *   → SweepRequested ─ no → FinishRun
 *                    └ yes → CheckSweep ⇄ WaitForSweep (until the sweep ends) → CompareWithIncumbent
 *   → ShouldPropose ─ better → ProposeExperiment → FinishRun → Succeed
 *                   └ otherwise → FinishRun
 * any error (after its retries) → RecordFailure (run failed, people told, job cancelled) → Failed
 * RecordFailure failing after its retries → Failed too (its Catch); the scheduled check (`checkStalledRuns`) then
 * finds the run non-terminal with no running execution, fails it and tells people.
 * ```
 */
import { noRetry, retrier, type AslDefinition, type AslState, type Json } from '../../shared/asl.ts';
import { TRAINER_JOB_ENV } from '../schemas.ts';
import {
  BUILD_DATASET_RETRY,
  POLICY_JOB_CLIENT_ERRORS,
  POLICY_JOB_SUBMIT_ERRORS,
  POLICY_JOB_SUBMIT_RETRY,
  POLICY_JOB_TASK_FAILED_ERRORS,
  TRAIN_STEP_ERRORS,
  TRAIN_STEP_RETRY,
} from './train-retry-policies.ts';
import type { TrainStepName } from './train-step-names.ts';
import { TrainingRunErrorNames } from '../runs/run-errors.ts';

export interface TrainDefinitionArns {
  /** The one Lambda function (ARN or name) that runs every step. */
  stepFunction: string;
  /** The GPU pool's fair-share job queue. */
  gpuJobQueue: string;
  /** The trainer image's job definition (`python -m flywheel_trainer policy-job`). */
  trainerJobDefinition: string;
  /** A multi-node parallel job definition of the same image, for `nodes > 1`; default `trainerJobDefinition`. */
  trainerMultiNodeJobDefinition?: string;
}

/** The workflow name under which the workflows port knows this state machine. */
export const TRAIN_WORKFLOW = 'train-policy';
/** The policy job's fair-share identifier (one of the five compute categories). */
export const TRAIN_SHARE_IDENTIFIER = 'training';
/** A Lambda step: at most Lambda's own 900 s. */
export const TRAIN_STEP_TIMEOUT_SECONDS = 900;
/** The policy job, queueing included: 5 days (a stalled one is reported long before, `checkStalledRuns`). */
export const POLICY_JOB_TIMEOUT_SECONDS = 5 * 86_400;
/** The whole run: the job, the sweep of its checkpoint (`TrainStepSettings.sweepWaitSeconds`) and the rest: 10 days. */
export const TRAIN_TIMEOUT_SECONDS = 10 * 86_400;

/** The policy job's environment (`TRAINER_JOB_ENV`), each value read from `$.train.env.<field>` (prepare-train). */
export const POLICY_JOB_ENVIRONMENT = Object.fromEntries(Object.entries(TRAINER_JOB_ENV).map(([field, name]) => [name, `$.train.env.${field}`])) as Record<
  (typeof TRAINER_JOB_ENV)[keyof typeof TRAINER_JOB_ENV],
  string
>;

export const TRAIN_STATES = {
  buildDataset: 'BuildDataset',
  alreadyRegistered: 'AlreadyRegistered',
  skipToSweep: 'SkipToSweep',
  prepare: 'PrepareTrain',
  shape: 'TrainShape',
  train: 'Train',
  trainMultiNode: 'TrainMultiNode',
  register: 'RegisterCheckpoint',
  sweepRequested: 'SweepRequested',
  checkSweep: 'CheckSweep',
  sweepEnded: 'SweepEnded',
  waitForSweep: 'WaitForSweep',
  compare: 'CompareWithIncumbent',
  shouldPropose: 'ShouldPropose',
  propose: 'ProposeExperiment',
  finish: 'FinishRun',
  succeeded: 'Succeed',
  failure: 'RecordFailure',
  failed: 'Failed',
} as const;

/**
 * Renders the training definition.
 *
 * @example
 * const definition = trainDefinition(localTrainArns());
 * await workflows.start(TRAIN_WORKFLOW, { name: executionName, input: { runId } });
 */
export function trainDefinition(arns: TrainDefinitionArns): AslDefinition {
  const catchAll = [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: TRAIN_STATES.failure }];
  const step = (name: TrainStepName, input: AslState, extra: AslState, retry = TRAIN_STEP_RETRY): AslState => ({
    Type: 'Task',
    Comment: `training step ${name}`,
    Resource: 'arn:aws:states:::lambda:invoke',
    Parameters: { FunctionName: arns.stepFunction, Payload: { step: name, input } },
    TimeoutSeconds: TRAIN_STEP_TIMEOUT_SECONDS,
    Retry: [retrier(TRAIN_STEP_ERRORS, retry)],
    // RecordFailure's own failure goes straight to Failed (best effort: the scheduled check fails the run later).
    Catch: name === 'record-failure' ? [{ ErrorEquals: ['States.ALL'], ResultPath: '$.failureError', Next: TRAIN_STATES.failed }] : catchAll,
    ...extra,
  });
  const run = { 'runId.$': '$.runId' };
  const environment = Object.entries(POLICY_JOB_ENVIRONMENT).map(([name, path]) => ({ Name: name, 'Value.$': path }));
  const policyJob = (multiNode: boolean): AslState => ({
    Type: 'Task',
    Comment: multiNode
      ? 'The policy job as a multi-node parallel job (torchrun on every node; waits: .sync)'
      : 'The policy job: the trainer image trains from the base on the dataset, writing metrics every step (waits: .sync)',
    Resource: 'arn:aws:states:::batch:submitJob.sync',
    Parameters: {
      // Made by prepare-train (`policyJobName`): [A-Za-z0-9_-], at most 128, one per run.
      'JobName.$': '$.train.jobName',
      JobQueue: arns.gpuJobQueue,
      JobDefinition: multiNode ? (arns.trainerMultiNodeJobDefinition ?? arns.trainerJobDefinition) : arns.trainerJobDefinition,
      ShareIdentifier: TRAIN_SHARE_IDENTIFIER,
      ...(multiNode
        ? { NodeOverrides: { 'NumNodes.$': '$.train.nodes', NodePropertyOverrides: [{ TargetNodes: '0:', ContainerOverrides: { Environment: environment, 'ResourceRequirements.$': '$.train.resources' } }] } }
        : { ContainerOverrides: { Environment: environment, 'ResourceRequirements.$': '$.train.resources' } }),
    },
    TimeoutSeconds: POLICY_JOB_TIMEOUT_SECONDS,
    ResultSelector: { 'jobId.$': '$.JobId', 'status.$': '$.Status' },
    ResultPath: '$.job',
    // One retry layer for the job's runs: Batch's attempts (POLICY_JOB_ATTEMPTS), never the state machine's.
    Retry: [noRetry(POLICY_JOB_CLIENT_ERRORS), retrier(POLICY_JOB_SUBMIT_ERRORS, POLICY_JOB_SUBMIT_RETRY), noRetry(POLICY_JOB_TASK_FAILED_ERRORS)],
    Catch: catchAll,
    Next: TRAIN_STATES.register,
  });
  const states: Record<string, AslState> = {
    [TRAIN_STATES.buildDataset]: step(
      'build-dataset',
      run,
      { ResultSelector: { 'datasetId.$': '$.Payload.datasetId', 'datasetKey.$': '$.Payload.datasetKey', 'registered.$': '$.Payload.registered', 'sweep.$': '$.Payload.sweep' }, ResultPath: '$.dataset', Next: TRAIN_STATES.alreadyRegistered },
      BUILD_DATASET_RETRY,
    ),
    [TRAIN_STATES.alreadyRegistered]: {
      Type: 'Choice',
      Comment: 'A run resumed after its checkpoint was registered: no training, no second registration',
      Choices: [{ Variable: '$.dataset.registered', BooleanEquals: true, Next: TRAIN_STATES.skipToSweep }],
      Default: TRAIN_STATES.prepare,
    },
    [TRAIN_STATES.skipToSweep]: { Type: 'Pass', Comment: 'What RegisterCheckpoint would have answered', InputPath: '$.dataset', ResultPath: '$.registered', Next: TRAIN_STATES.sweepRequested },
    [TRAIN_STATES.prepare]: step('prepare-train', run, { ResultSelector: { 'jobName.$': '$.Payload.jobName', 'nodes.$': '$.Payload.nodes', 'env.$': '$.Payload.env', 'resources.$': '$.Payload.resources' }, ResultPath: '$.train', Next: TRAIN_STATES.shape }),
    [TRAIN_STATES.shape]: {
      Type: 'Choice',
      Comment: 'More than one node: a multi-node parallel job',
      Choices: [{ Variable: '$.train.nodes', NumericGreaterThan: 1, Next: TRAIN_STATES.trainMultiNode }],
      Default: TRAIN_STATES.train,
    },
    [TRAIN_STATES.train]: policyJob(false),
    [TRAIN_STATES.trainMultiNode]: policyJob(true),
    [TRAIN_STATES.register]: step('register-checkpoint', { ...run, 'jobId.$': '$.job.jobId' }, {
      ResultSelector: { 'checkpointId.$': '$.Payload.checkpointId', 'sweep.$': '$.Payload.sweep' },
      ResultPath: '$.registered',
      Next: TRAIN_STATES.sweepRequested,
    }),
    [TRAIN_STATES.sweepRequested]: {
      Type: 'Choice',
      Comment: 'The request asked for a sweep of the checkpoint (the checkpoint.registered trigger starts it)',
      Choices: [{ Variable: '$.registered.sweep', BooleanEquals: true, Next: TRAIN_STATES.checkSweep }],
      Default: TRAIN_STATES.finish,
    },
    [TRAIN_STATES.checkSweep]: step('check-sweep', run, { ResultSelector: { 'done.$': '$.Payload.done', 'waitSeconds.$': '$.Payload.waitSeconds' }, ResultPath: '$.sweep', Next: TRAIN_STATES.sweepEnded }),
    [TRAIN_STATES.sweepEnded]: {
      Type: 'Choice',
      Choices: [{ Variable: '$.sweep.done', BooleanEquals: true, Next: TRAIN_STATES.compare }],
      Default: TRAIN_STATES.waitForSweep,
    },
    [TRAIN_STATES.waitForSweep]: { Type: 'Wait', Comment: 'The sweep of the checkpoint runs: look again later', SecondsPath: '$.sweep.waitSeconds', Next: TRAIN_STATES.checkSweep },
    [TRAIN_STATES.compare]: step('compare-incumbent', run, { ResultSelector: { 'better.$': '$.Payload.better', 'propose.$': '$.Payload.propose' }, ResultPath: '$.comparison', Next: TRAIN_STATES.shouldPropose }),
    [TRAIN_STATES.shouldPropose]: {
      Type: 'Choice',
      Comment: 'Better than the incumbent, and the request wants an A/B test proposed',
      Choices: [{ Variable: '$.comparison.propose', BooleanEquals: true, Next: TRAIN_STATES.propose }],
      Default: TRAIN_STATES.finish,
    },
    [TRAIN_STATES.propose]: step('propose-experiment', run, { ResultSelector: { 'proposalId.$': '$.Payload.proposalId' }, ResultPath: '$.proposal', Next: TRAIN_STATES.finish }),
    [TRAIN_STATES.finish]: step('finish-run', run, { ResultSelector: { 'runId.$': '$.Payload.runId', 'status.$': '$.Payload.status' }, ResultPath: '$.finished', Next: TRAIN_STATES.succeeded }),
    [TRAIN_STATES.succeeded]: { Type: 'Succeed' },
    [TRAIN_STATES.failure]: step('record-failure', { 'runId.$': '$.runId', 'error.$': '$.error' }, { ResultPath: '$.failure', Next: TRAIN_STATES.failed }),
    [TRAIN_STATES.failed]: { Type: 'Fail', Error: TrainingRunErrorNames.runFailed, Cause: 'the training run failed: see its record (error) and the notice people got' },
  };
  return {
    Comment: 'Flywheel training run: dataset → policy job → checkpoint with lineage → its sweep → compared with the incumbent → an A/B test proposed',
    StartAt: TRAIN_STATES.buildDataset,
    TimeoutSeconds: TRAIN_TIMEOUT_SECONDS,
    States: states as Record<string, { [key: string]: Json }>,
  };
}
