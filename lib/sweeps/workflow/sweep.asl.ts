/**
 * The sweep state machine, as a definition factory: ARNs in, Amazon States Language (JSONPath) out. The CDK construct
 * (`lib/sweeps/infra/sweep-state-machine.ts`) passes tokens; the local runtime passes placeholders
 * (`localSweepArns()`) and runs the same JSON with `aws-local-stepfunctions`. `test/workflow/definitions.test.ts`
 * holds it to the subset both runtimes execute.
 *
 * ```
 * ValidateSweep → PlanShards → ChooseMapMode ─┬─ ≤ INLINE_MAP_MAX_SHARDS → RunShardsInline ──────┬→ CompareIncumbent
 *                                             └─ more                    → RunShardsDistributed ─┘   → CheckSaturation → Notify
 * each Map iteration: IsShardDone ─┬─ done in an earlier run of this sweep id → KeepShardResult   (no job)
 *                                   ├─ tasks in an environment image → SubmitShardJobInImage ─┐ (its job definition)
 *                                   └─ SubmitShardJob (Batch array job, .sync, rollout definition) ─┴→ AggregateShard
 *                     any error of either (after retries) → RecordShardFailure   (the iteration still succeeds)
 * ```
 *
 * Why IsShardDone: a redrive on AWS reruns only what did not succeed, but a sweep Step Functions can no longer
 * redrive is continued by a new execution (`<sweepId>.r2`), and that one replans; plan-shards marks the shards
 * whose results are already aggregated, so resuming a sweep never pays for a finished shard's GPU hours again.
 *
 * Why two Maps: an inline Map's iterations share the execution's 25,000-event history; a Distributed Map runs each
 * iteration as a child execution with its own history. DESIGN.md's subset forbids ItemReader/ResultWriter/ItemBatcher,
 * so the Distributed Map reads its items inline (ItemsPath over the plan in the state) exactly as the inline one does;
 * `aws-local-stepfunctions` ignores ProcessorConfig and runs both as a Map, so the local runtime takes whichever
 * branch the plan chooses. The plan itself is bounded by the 256 KiB state (`MAX_SWEEP_SHARDS`).
 */
import { BATCH_CLIENT_ERRORS, BATCH_SUBMIT_ERRORS, noRetry, retrier, type AslDefinition, type AslState, type Json } from '../../shared/asl.ts';
import { BATCH_JOB_RETRY, BATCH_SUBMIT_RETRY, LAMBDA_STEP_ERRORS, LAMBDA_STEP_RETRY } from './retry-policies.ts';
import type { SweepStepIo, SweepStepName } from './sweep-steps.ts';


export interface SweepDefinitionArns {
  /** Lambda function ARN (or name) per step. */
  functions: Record<SweepStepName, string>;
  /** The GPU pool's fair-share job queue. */
  gpuJobQueue: string;
  /**
   * The rollout image's job definition. A shard in an environment image is submitted under its ShardRef's
   * `jobDefinition` instead (a clone of this one, `<name>-env-<hash>`).
   */
  rolloutJobDefinition: string;
}

export interface SweepDefinitionOptions {
  /** Plans with more shards take the Distributed Map; default `INLINE_MAP_MAX_SHARDS` (tests lower it). */
  inlineMapMaxShards?: number;
}

/** The workflow name under which the workflows port knows this state machine. */
export const SWEEP_WORKFLOW = 'sweep';

/** Fair-share identifier of every sweep job (one of the five compute categories). */
export const SWEEP_SHARE_IDENTIFIER = 'evaluation';

/**
 * Shards above which the sweep uses the Distributed Map. An inline iteration costs about 13 history events
 * (iteration started/succeeded, 5 for the Batch task, 5 for the aggregate Lambda, 1 exit) and up to ≈ 41 with every
 * retry spent (6 submit retries × 4 + 1 job retry × 4); 500 × 41 = 20,500 stays under Step Functions' 25,000-event
 * history with room for the states around the Map.
 */
export const INLINE_MAP_MAX_SHARDS = 500;

/** The inline Map's concurrency: Step Functions runs at most 40 inline iterations at once (DESIGN.md, limits). */
export const INLINE_MAP_MAX_CONCURRENCY = 40;

/**
 * The Distributed Map's concurrency. Each iteration submits one job and then waits on it, so at most 100 submissions
 * arrive together: 2 s of Batch's 50 SubmitJob/s account rate; throttled ones back off with full jitter
 * (`BATCH_SUBMIT_RETRY`). More would only queue more RUNNABLE jobs behind the same GPUs.
 */
export const DISTRIBUTED_MAP_MAX_CONCURRENCY = 100;

/** One attempt of a rollout job (each array child) may run this long; the job definition's timeout (6 h). */
export const ROLLOUT_ATTEMPT_TIMEOUT_SECONDS = 6 * 3600;
/** Attempts Batch makes of a rollout child (the job definition's retry strategy). */
export const ROLLOUT_JOB_ATTEMPTS = 3;

/**
 * A shard's array job may take this long before Step Functions gives up on it and stops it: every attempt at its
 * longest (3 × 6 h = 18 h) plus 2 h of queueing = 20 h. Two tries of a shard (BATCH_JOB_RETRY) and the steps around
 * them fit SWEEP_TIMEOUT_SECONDS (2 × 20 h + 8 h to spare = 48 h).
 */
export const SHARD_JOB_TIMEOUT_SECONDS = ROLLOUT_JOB_ATTEMPTS * ROLLOUT_ATTEMPT_TIMEOUT_SECONDS + 2 * 3600;

/** A Lambda step: at most Lambda's own 900 s (the local runtime would otherwise apply its 60 s default). */
export const LAMBDA_STEP_TIMEOUT_SECONDS = 900;

/** The whole sweep: two days, then it fails with States.Timeout (nothing is left running: .sync stops the job). */
export const SWEEP_TIMEOUT_SECONDS = 48 * 3600;

/** The environment a rollout job reads its shard from (the image's entry point: `batch-images/rollout/`). */
export const SHARD_JOB_ENVIRONMENT = {
  FLYWHEEL_SWEEP_ID: '$.sweepId',
  FLYWHEEL_SHARD_ID: '$.shard.shardId',
  FLYWHEEL_SHARD_KEY: '$.shard.shardKey',
  FLYWHEEL_CHECKPOINT: '$.shard.checkpoint',
  FLYWHEEL_SUITE: '$.shard.suite',
  FLYWHEEL_MODE: '$.shard.mode',
} as const;

/**
 * The GPUs each child of a shard's array job asks for, overriding the rollout job definition's 1: the ShardRef's
 * `gpus` (a vLLM checkpoint's `serving.gpus`). Batch takes a resource value as a string, and a JSONPath can only copy
 * the number, so the intrinsic formats it (both runtimes evaluate intrinsics in Parameters). The local jobs driver
 * ignores it (its GPU pool counts jobs, not GPUs).
 */
export const SHARD_JOB_RESOURCES = [{ Type: 'GPU', 'Value.$': "States.Format('{}', $.shard.gpus)" }] as const;

/** The top-level state names (tests and the local driver address them). */
export const SWEEP_STATES = {
  validate: 'ValidateSweep',
  plan: 'PlanShards',
  chooseMap: 'ChooseMapMode',
  inlineMap: 'RunShardsInline',
  distributedMap: 'RunShardsDistributed',
  compare: 'CompareIncumbent',
  saturation: 'CheckSaturation',
  notify: 'Notify',
} as const;

/**
 * Renders the sweep definition.
 *
 * @example
 * const definition = sweepDefinition(localSweepArns());
 * new StateMachine(definition).run({ sweepId: 's1', trigger: 'manual', requestedAt: new Date().toISOString() });
 */
export function sweepDefinition(arns: SweepDefinitionArns, options: SweepDefinitionOptions = {}): AslDefinition {
  const inlineMapMaxShards = options.inlineMapMaxShards ?? INLINE_MAP_MAX_SHARDS;
  /** A Lambda step; `payload` is a template, or a path whose value is the whole payload. */
  const lambda = <K extends SweepStepName>(step: K, payload: AslState | `$${string}`, extra: AslState): AslState => ({
    Type: 'Task',
    Comment: `sweep step ${step}`,
    Resource: 'arn:aws:states:::lambda:invoke',
    Parameters: { FunctionName: arns.functions[step], ...(typeof payload === 'string' ? { 'Payload.$': payload } : { Payload: payload }) },
    TimeoutSeconds: LAMBDA_STEP_TIMEOUT_SECONDS,
    Retry: [retrier(LAMBDA_STEP_ERRORS, LAMBDA_STEP_RETRY)],
    ...extra,
  });
  /** Picks the named fields of the step's result into the state: every one must be present (they are required). */
  const selectFields = <K extends SweepStepName>(_step: K, fields: ReadonlyArray<keyof SweepStepIo[K][1] & string>): AslState =>
    Object.fromEntries(fields.map((f) => [`${f}.$`, `$.Payload.${f}`]));

  const iteration = (suffix: string): { StartAt: string; States: Record<string, Json> } => {
    const isDone = `IsShardDone${suffix}`;
    const keep = `KeepShardResult${suffix}`;
    const submit = `SubmitShardJob${suffix}`;
    const submitInImage = `SubmitShardJobInImage${suffix}`;
    const aggregate = `AggregateShard${suffix}`;
    const failure = `RecordShardFailure${suffix}`;
    const catchAll = [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: failure }];
    /** The shard's Batch array job under the given job definition (a fixed ARN, or a path into the item). */
    const batchTask = (comment: string, jobDefinition: AslState): AslState => ({
      Type: 'Task',
      Comment: comment,
      Resource: 'arn:aws:states:::batch:submitJob.sync',
      Parameters: {
        'JobName.$': "States.Format('{}-{}', $.sweepId, $.shard.shardId)",
        JobQueue: arns.gpuJobQueue,
        ...jobDefinition,
        ShareIdentifier: SWEEP_SHARE_IDENTIFIER,
        ArrayProperties: { 'Size.$': '$.shard.arraySize' },
        ContainerOverrides: {
          Environment: Object.entries(SHARD_JOB_ENVIRONMENT).map(([name, path]) => ({ Name: name, 'Value.$': path })),
          ResourceRequirements: SHARD_JOB_RESOURCES.map((r) => ({ ...r })),
        },
      },
      TimeoutSeconds: SHARD_JOB_TIMEOUT_SECONDS,
      // DescribeJobs' whole job description comes back; keep its id and status only (keys, not bodies).
      ResultSelector: { 'jobId.$': '$.JobId', 'status.$': '$.Status' },
      ResultPath: '$.job',
      // First match wins: a refused submission is not retried (States.TaskFailed would match it too), a throttled
      // one backs off, a failed job runs once more.
      Retry: [noRetry(BATCH_CLIENT_ERRORS), retrier(BATCH_SUBMIT_ERRORS, BATCH_SUBMIT_RETRY), retrier(['States.TaskFailed'], BATCH_JOB_RETRY)],
      Catch: catchAll,
      Next: aggregate,
    });
    return {
      StartAt: isDone,
      States: {
        [isDone]: {
          Type: 'Choice',
          Comment:
            'A shard an earlier run of this sweep id aggregated (plan-shards sets done) submits no job; a shard whose tasks name an environment image is submitted under the job definition plan-shards gave it',
          Choices: [
            { Variable: '$.shard.done', IsPresent: true, Next: keep },
            { Variable: '$.shard.jobDefinition', IsPresent: true, Next: submitInImage },
          ],
          Default: submit,
        },
        [keep]: {
          Type: 'Pass',
          Comment: 'The outcome of a shard kept from an earlier run (its result rows are already written)',
          Parameters: { 'shardId.$': '$.shard.shardId', status: 'succeeded', kept: true },
          End: true,
        },
        [submit]: batchTask('One Batch array job per shard, on the GPU queue under the evaluation share; waits for it (.sync)', { JobDefinition: arns.rolloutJobDefinition }),
        [submitInImage]: batchTask(
          "The same job for a shard whose tasks name an environment image, under that image's job definition (the ShardRef's, registered by plan-shards)",
          { 'JobDefinition.$': '$.shard.jobDefinition' },
        ),
        [aggregate]: lambda(
          'aggregate-shard',
          { 'sweepId.$': '$.sweepId', 'shard.$': '$.shard', 'job.$': '$.job' },
          { OutputPath: '$.Payload', Catch: catchAll, End: true },
        ),
        [failure]: lambda(
          'record-shard-failure',
          { 'sweepId.$': '$.sweepId', 'shard.$': '$.shard', 'error.$': '$.error' },
          { OutputPath: '$.Payload', End: true },
        ),
      },
    };
  };
  const mapState = (mode: 'INLINE' | 'DISTRIBUTED', maxConcurrency: number, suffix: string): AslState => ({
    Type: 'Map',
    Comment:
      mode === 'INLINE'
        ? 'Shards of a small sweep, in the execution'
        : 'Shards of a large sweep, each iteration a child execution (items inline from the plan: no ItemReader)',
    ItemsPath: '$.plan.shards',
    ItemSelector: { 'sweepId.$': '$.sweep.sweepId', 'shard.$': '$$.Map.Item.Value' },
    MaxConcurrency: maxConcurrency,
    ItemProcessor: {
      ProcessorConfig: mode === 'INLINE' ? { Mode: 'INLINE' } : { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' },
      ...(iteration(suffix) as unknown as { [key: string]: Json }),
    },
    // The outcomes replace the plan's shard list, so the state never holds both (256 KiB).
    ResultPath: '$.plan.shards',
    Next: SWEEP_STATES.compare,
  });

  const definition: AslDefinition = {
    Comment: 'Flywheel eval sweep: checkpoints × suites × modes on AWS Batch, aggregated, compared, saturation-checked',
    StartAt: SWEEP_STATES.validate,
    TimeoutSeconds: SWEEP_TIMEOUT_SECONDS,
    States: {
      [SWEEP_STATES.validate]: lambda('validate-sweep', '$', {
        ResultSelector: selectFields('validate-sweep', ['sweepId', 'sweepKey', 'checkpoints', 'suites', 'modes']),
        ResultPath: '$.sweep',
        Next: SWEEP_STATES.plan,
      }),
      [SWEEP_STATES.plan]: lambda('plan-shards', { 'sweepId.$': '$.sweep.sweepId' }, {
        ResultSelector: selectFields('plan-shards', ['sweepId', 'planKey', 'shardCount', 'shards']),
        ResultPath: '$.plan',
        Next: SWEEP_STATES.chooseMap,
      }),
      [SWEEP_STATES.chooseMap]: {
        Type: 'Choice',
        Choices: [{ Variable: '$.plan.shardCount', NumericGreaterThan: inlineMapMaxShards, Next: SWEEP_STATES.distributedMap }],
        Default: SWEEP_STATES.inlineMap,
      },
      [SWEEP_STATES.inlineMap]: mapState('INLINE', INLINE_MAP_MAX_CONCURRENCY, ''),
      [SWEEP_STATES.distributedMap]: mapState('DISTRIBUTED', DISTRIBUTED_MAP_MAX_CONCURRENCY, 'Distributed'),
      [SWEEP_STATES.compare]: lambda('compare-incumbent', { 'sweepId.$': '$.sweep.sweepId' }, {
        ResultSelector: selectFields('compare-incumbent', ['comparisonKey', 'comparisons', 'regressions', 'improvements']),
        ResultPath: '$.comparison',
        Next: SWEEP_STATES.saturation,
      }),
      [SWEEP_STATES.saturation]: lambda('check-saturation', { 'sweepId.$': '$.sweep.sweepId' }, {
        ResultSelector: selectFields('check-saturation', ['newlySaturated', 'threshold']),
        ResultPath: '$.saturation',
        Next: SWEEP_STATES.notify,
      }),
      [SWEEP_STATES.notify]: lambda(
        'notify',
        { 'sweepId.$': '$.sweep.sweepId', 'shards.$': '$.plan.shards', 'comparison.$': '$.comparison', 'saturation.$': '$.saturation' },
        {
          ResultSelector: selectFields('notify', ['sweepId', 'status', 'succeededShards', 'failedShards']),
          ResultPath: '$.notice',
          OutputPath: '$.notice',
          End: true,
        },
      ),
    },
  };
  return definition;
}
