/**
 * The judge derivation state machine, as a definition factory: ARNs in, Amazon States Language (JSONPath) out. The
 * CDK construct (`lib/judges/infra/derive-judges-state-machine.ts`) passes tokens; the local runtime passes
 * placeholders (`localDeriveArns()`) and runs the same JSON with `aws-local-stepfunctions`. One Lambda runs every
 * step (`functions/judges/derive-step.ts`): the payload names the step.
 *
 * ```
 * PlanDerivation → DeriveEachJudge (Map over the planned judge names, inline):
 *     CalibratePrompted → CollectTeacher → TrainDistilled (Batch .sync, trainer image, CPU pool)
 *       → CalibrateDistilled → DecidePromotion
 *     any error of one (after its retries) → RecordJudgeFailure   (the iteration still succeeds)
 * → ReportDerivation (record + report.json, notice to people)
 * ```
 */
import type { DeriveStepName } from './derive-steps.ts';
import {
  DERIVE_STEP_ERRORS,
  DERIVE_STEP_RETRY,
  TRAINER_CLIENT_ERRORS,
  TRAINER_SUBMIT_ERRORS,
  TRAINER_SUBMIT_RETRY,
  TRAINER_TASK_FAILED_ERRORS,
} from './derive-retry-policies.ts';
import { noRetry, retrier, type AslDefinition, type AslState, type Json } from '../../shared/asl.ts';


export interface DeriveDefinitionArns {
  /** The one Lambda function (ARN or name) that runs every step. */
  stepFunction: string;
  /** The CPU pool's fair-share job queue. */
  cpuJobQueue: string;
  /** The trainer image's job definition. */
  trainerJobDefinition: string;
}

/** The workflow name under which the workflows port knows this state machine. */
export const DERIVE_WORKFLOW = 'derive-judges';
/** The trainer's fair-share identifier (one of the five compute categories). */
export const DERIVE_SHARE_IDENTIFIER = 'data-and-reward';
/** A Lambda step: at most Lambda's own 900 s. */
export const DERIVE_STEP_TIMEOUT_SECONDS = 900;
/** The trainer job: 2 h of training and queueing (a small model on a CPU trains in minutes). */
export const TRAINER_JOB_TIMEOUT_SECONDS = 2 * 3600;
/** Judge names derived at once. */
export const DERIVE_MAP_MAX_CONCURRENCY = 4;
/** The whole derivation: 12 h. */
export const DERIVE_TIMEOUT_SECONDS = 12 * 3600;

/** The environment the trainer job reads (`batch-images/trainer/flywheel_trainer/__main__.py`), from the state. */
export const TRAINER_JOB_ENVIRONMENT = {
  FLYWHEEL_TRAIN_DATA_KEY: '$.teacher.trainer.trainDataKey',
  FLYWHEEL_MODEL_KEY: '$.teacher.trainer.modelKey',
  FLYWHEEL_REWARD_KIND: '$.teacher.trainer.rewardKind',
  FLYWHEEL_SEED: '$.teacher.trainer.seed',
  FLYWHEEL_EPOCHS: '$.teacher.trainer.epochs',
} as const;

export const DERIVE_STATES = {
  plan: 'PlanDerivation',
  map: 'DeriveEachJudge',
  calibratePrompted: 'CalibratePrompted',
  collectTeacher: 'CollectTeacher',
  train: 'TrainDistilled',
  calibrateDistilled: 'CalibrateDistilled',
  decide: 'DecidePromotion',
  failure: 'RecordJudgeFailure',
  report: 'ReportDerivation',
} as const;

/**
 * Renders the derivation definition. Input: `{ derivationId, checkpointId }`.
 *
 * @example
 * const definition = deriveJudgesDefinition(localDeriveArns());
 * await workflows.start(DERIVE_WORKFLOW, { name: derivationId, input: { derivationId, checkpointId } });
 */
export function deriveJudgesDefinition(arns: DeriveDefinitionArns): AslDefinition {
  const step = (name: DeriveStepName, input: AslState, extra: AslState): AslState => ({
    Type: 'Task',
    Comment: `derivation step ${name}`,
    Resource: 'arn:aws:states:::lambda:invoke',
    Parameters: { FunctionName: arns.stepFunction, Payload: { step: name, input } },
    TimeoutSeconds: DERIVE_STEP_TIMEOUT_SECONDS,
    Retry: [retrier(DERIVE_STEP_ERRORS, DERIVE_STEP_RETRY)],
    ...extra,
  });
  const judge = { 'derivationId.$': '$.derivationId', 'name.$': '$.name' };
  const catchAll = [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: DERIVE_STATES.failure }];
  const iteration = {
    StartAt: DERIVE_STATES.calibratePrompted,
    States: {
      [DERIVE_STATES.calibratePrompted]: step('calibrate-prompted', judge, { ResultSelector: { 'prompted.$': '$.Payload.prompted' }, ResultPath: '$.prompted', Catch: catchAll, Next: DERIVE_STATES.collectTeacher }),
      [DERIVE_STATES.collectTeacher]: step('collect-teacher', judge, {
        ResultSelector: { 'examples.$': '$.Payload.examples', 'trainer.$': '$.Payload.trainer' },
        ResultPath: '$.teacher',
        Catch: catchAll,
        Next: DERIVE_STATES.train,
      }),
      [DERIVE_STATES.train]: {
        Type: 'Task',
        Comment: 'The distilled judge: the trainer image learns a small reward model from the teacher’s verdicts (waits: .sync)',
        Resource: 'arn:aws:states:::batch:submitJob.sync',
        Parameters: {
          // Made by collect-teacher (`trainerJobName`): [A-Za-z0-9_-], at most 128, unique per derivation and judge.
          'JobName.$': '$.teacher.trainer.jobName',
          JobQueue: arns.cpuJobQueue,
          JobDefinition: arns.trainerJobDefinition,
          ShareIdentifier: DERIVE_SHARE_IDENTIFIER,
          ContainerOverrides: { Environment: Object.entries(TRAINER_JOB_ENVIRONMENT).map(([name, path]) => ({ Name: name, 'Value.$': path })) },
        },
        TimeoutSeconds: TRAINER_JOB_TIMEOUT_SECONDS,
        ResultSelector: { 'jobId.$': '$.JobId', 'status.$': '$.Status' },
        ResultPath: '$.job',
        // A failed job is not retried here: Batch's own attempts are the one retry layer (TRAINER_JOB_ATTEMPTS).
        Retry: [noRetry(TRAINER_CLIENT_ERRORS), retrier(TRAINER_SUBMIT_ERRORS, TRAINER_SUBMIT_RETRY), noRetry(TRAINER_TASK_FAILED_ERRORS)],
        Catch: catchAll,
        Next: DERIVE_STATES.calibrateDistilled,
      },
      [DERIVE_STATES.calibrateDistilled]: step('calibrate-distilled', judge, { ResultSelector: { 'distilled.$': '$.Payload.distilled' }, ResultPath: '$.distilled', Catch: catchAll, Next: DERIVE_STATES.decide }),
      [DERIVE_STATES.decide]: step('decide-promotion', judge, { OutputPath: '$.Payload', Catch: catchAll, End: true }),
      [DERIVE_STATES.failure]: step('record-judge-failure', { ...judge, 'error.$': '$.error' }, { OutputPath: '$.Payload', End: true }),
    },
  };
  return {
    Comment: 'Flywheel judge derivation: a new top model’s prompted judge and a distilled reward model, calibrated against people and promoted when they pass cheaper',
    StartAt: DERIVE_STATES.plan,
    TimeoutSeconds: DERIVE_TIMEOUT_SECONDS,
    States: {
      [DERIVE_STATES.plan]: step('plan-derivation', { 'derivationId.$': '$.derivationId', 'checkpointId.$': '$.checkpointId' }, {
        ResultSelector: { 'judges.$': '$.Payload.judges', 'skipped.$': '$.Payload.skipped' },
        ResultPath: '$.plan',
        Next: DERIVE_STATES.map,
      }),
      [DERIVE_STATES.map]: {
        Type: 'Map',
        Comment: 'Each judge name with a promoted version and a gold set, derived on its own (a failure is recorded, not raised)',
        ItemsPath: '$.plan.judges',
        MaxConcurrency: DERIVE_MAP_MAX_CONCURRENCY,
        ItemProcessor: { ProcessorConfig: { Mode: 'INLINE' }, ...(iteration as unknown as { [key: string]: Json }) },
        ResultPath: '$.plan.judges',
        Next: DERIVE_STATES.report,
      },
      [DERIVE_STATES.report]: step('report-derivation', { 'derivationId.$': '$.derivationId' }, { OutputPath: '$.Payload', End: true }),
    },
  };
}
