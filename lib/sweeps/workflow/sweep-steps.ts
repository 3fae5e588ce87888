/**
 * The contract between the sweep state machine (`sweep.asl.ts`, owned by the sweeps-workflow helper) and the sweep use
 * cases (`lib/sweeps/*.ts`, owned by the sweeps-registry helper): the name of every Lambda step the definition calls,
 * and the JSON each one takes and returns.
 *
 * One step = one Lambda on AWS (`functions/sweeps/<step>.ts`, a thin middy entry calling `SWEEP_STEPS[step]`) and one
 * local handler in the local workflows driver (calling the very same function). Everything here crosses a Step
 * Functions state, so it stays small (256 KiB per state, for the whole Map result too): ids and blob/record keys,
 * never bodies (task lists, trajectories, scores per task live in records and blobs).
 *
 * Idempotency: the state machine may run a step more than once with the same input (a Retry, or a re-run of the same
 * sweep id after a crash: the local driver replays the definition from the start; on AWS a redrive replays the
 * failed part). Every step must give the same answer and write the same records the second time: natural keys
 * (`sweepId`, `shardId`) and conditional or overwriting puts, never increments or appends.
 *
 * Data flow through the definition (JSONPath):
 * ```
 * execution input: SweepExecutionInput
 *   validate-sweep(SweepExecutionInput)        → $.sweep  : ValidatedSweep
 *   plan-shards({ sweepId })                   → $.plan   : ShardPlan
 *   Map over $.plan.shards (ShardRef), per item:
 *     Batch submitJob.sync (array job, env, GPUs from ShardRef; the rollout definition, or the ShardRef's
 *       jobDefinition for a shard run in an environment image) → $.job : { jobId, status }
 *     aggregate-shard({ sweepId, shard, job })                  → item output: ShardOutcome (succeeded)
 *     on any error (caught inside the iteration):
 *     record-shard-failure({ sweepId, shard, error })           → item output: ShardOutcome (failed)
 *                                              → $.plan.shards is replaced by ShardOutcome[] (never both in state)
 *   compare-incumbent({ sweepId })             → $.comparison : IncumbentComparison
 *   check-saturation({ sweepId })              → $.saturation : SaturationCheck
 *   notify({ sweepId, shards, comparison, saturation }) → $.notice : SweepNotice   (the execution's output)
 * ```
 */
import type { BlobsPort } from '../../ports/blobs.ts';
import type { EventsPort } from '../../ports/events.ts';
import type { RecordsPort } from '../../ports/records.ts';
import type { z } from 'zod';
import type { HarnessMode } from '../../harness/task/harness-mode.ts';
import type { SweepTriggerSchema } from '../schemas.ts';

/** What started a sweep: `flywheel sweep start`, the per-stage schedule, or a `checkpoint.registered` event. */
export type SweepTrigger = z.infer<typeof SweepTriggerSchema>;

/** The Lambda steps of the sweep state machine, in the order they run. */
export const SWEEP_STEP_NAMES = [
  'validate-sweep',
  'plan-shards',
  'aggregate-shard',
  'record-shard-failure',
  'compare-incumbent',
  'check-saturation',
  'notify',
] as const;
export type SweepStepName = (typeof SWEEP_STEP_NAMES)[number];

/**
 * The execution input (what `flywheel sweep start`, the schedule and the checkpoint rule pass to
 * `workflows.start('sweep', { name: sweepId, input })`). The execution name is the sweep id.
 * Absent selections mean: `checkpoints` → the newest checkpoint of each model; `suites` → every active suite;
 * `modes` → both.
 */
export interface SweepExecutionInput {
  sweepId: string;
  trigger: SweepTrigger;
  checkpoints?: string[];
  suites?: string[];
  modes?: HarnessMode[];
  /** Attempts per task (the k of pass@k); absent → the registry's default. */
  attemptsPerTask?: number;
  /** ISO 8601. */
  requestedAt: string;
  requestedBy?: string;
}

/** validate-sweep → `$.sweep`. Throws `Flywheel.ValidationError` (not retried, fails the execution) on a bad request. */
export interface ValidatedSweep {
  sweepId: string;
  /** Key of the sweep record or blob holding the resolved selection (checkpoint ids, suite ids and versions, modes). */
  sweepKey: string;
  checkpoints: number;
  suites: number;
  modes: number;
}

export interface PlanShardsInput {
  sweepId: string;
}

/**
 * One shard: one checkpoint × suite × mode, run as one AWS Batch array job whose children split the suite's tasks.
 * Kept small (≈ 200 bytes): `MAX_SWEEP_SHARDS` of them must fit a 256 KiB state.
 */
export interface ShardRef {
  /** Unique within the sweep, stable across re-plans of the same sweep (e.g. `c0-s1-strict`); letters, digits, `-`, `_`. */
  shardId: string;
  /** Blob key of the shard's work list (tasks, attempts, model endpoint): what the rollout job reads (`FLYWHEEL_SHARD_KEY`). */
  shardKey: string;
  checkpoint: string;
  suite: string;
  mode: HarnessMode;
  /** Batch array size: 2 ≤ arraySize ≤ 10,000 (Batch arrays start at 2; a child with no tasks exits 0). */
  arraySize: number;
  /**
   * GPUs each array child asks Batch for (the Batch task's `ResourceRequirements` override of the rollout job
   * definition's 1): the checkpoint's `serving.gpus` when the job serves it with vLLM, else 1. An endpoint-served
   * checkpoint needs no local GPU, but every shard runs on the GPU queue with the one rollout job definition, so its
   * job lands on a GPU instance whatever it asks for; it keeps the definition's 1 (the way to free that GPU would be
   * to send endpoint shards to the CPU queue with a GPU-less job definition, not a 0 here).
   */
  gpus: number;
  /**
   * Present when the shard's tasks name an environment image (`task.environment.image`; the shard spec's
   * `environmentImage`): the job definition the Batch task submits the shard under instead of the rollout
   * definition (`SubmitShardJobInImage`, `JobDefinition.$`). On AWS the ARN of the rollout definition's clone for
   * that image, which plan-shards registered (`SweepStepPorts.imageDefinitions`); locally the rollout definition
   * itself (the local jobs driver runs no images). Absent: the rollout definition.
   */
  jobDefinition?: string;
  /** Present (true) when an earlier run of this sweep id aggregated the shard: the Map keeps it and submits no job. */
  done?: true;
}

/** plan-shards → `$.plan`. Writing the plan is idempotent: the same sweep id plans the same shards (same ids and keys). */
export interface ShardPlan {
  sweepId: string;
  /** Key of the full plan (blob or record). */
  planKey: string;
  shardCount: number;
  shards: ShardRef[];
}

/** The Batch job's result as the state machine keeps it (a ResultSelector over DescribeJobs output). */
export interface ShardJobResult {
  jobId: string;
  /** `SUCCEEDED` (a failed job is an error, caught by the iteration's Catch). */
  status: string;
}

export interface AggregateShardInput {
  sweepId: string;
  shard: ShardRef;
  job: ShardJobResult;
}

/** A Map iteration's output: one per shard; `$.plan.shards` becomes the list of these. */
export interface ShardOutcome {
  shardId: string;
  status: 'succeeded' | 'failed';
  /** For a succeeded shard: key of its aggregated result (score per checkpoint × suite × mode, with CI). */
  resultKey?: string;
  /** For a failed shard: the Step Functions error name (`States.TaskFailed`, `Batch.AWSBatchException`, …). */
  error?: string;
  /** A shard kept from an earlier run of this sweep id (`ShardRef.done`): no job ran for it in this one. */
  kept?: boolean;
}

/** The error a Catch adds (`ResultPath: $.error`). `Cause` can be long (Batch puts the job description there). */
export interface StepError {
  Error: string;
  Cause?: string;
}

export interface RecordShardFailureInput {
  sweepId: string;
  shard: ShardRef;
  error: StepError;
}

export interface SweepIdInput {
  sweepId: string;
}

/** compare-incumbent → `$.comparison`. */
export interface IncumbentComparison {
  /** Key of the comparison (per suite × mode: checkpoint vs incumbent, difference and CI). */
  comparisonKey: string;
  comparisons: number;
  /** Suite × mode pairs where a checkpoint is significantly worse / better than the incumbent. */
  regressions: number;
  improvements: number;
}

/** check-saturation → `$.saturation`. */
export interface SaturationCheck {
  /** Suites this sweep pushed over the threshold (marked saturated now; already saturated ones are not repeated). */
  newlySaturated: string[];
  /** The threshold applied (best strict score, 0–1). */
  threshold: number;
}

export interface NotifyInput {
  sweepId: string;
  shards: ShardOutcome[];
  comparison: IncumbentComparison;
  saturation: SaturationCheck;
}

/** notify → `$.notice`, the last state: marks the sweep finished and publishes `sweep.finished` (+ `suite.saturated`). */
export interface SweepNotice {
  sweepId: string;
  status: 'succeeded' | 'partial' | 'failed';
  succeededShards: number;
  failedShards: number;
}

/** The ports every step is handed (the Lambda entries build them from AWS drivers, the local runtime from local ones). */
export interface SweepStepPorts {
  records: RecordsPort;
  blobs: BlobsPort;
  events: EventsPort;
  now: () => Date;
  /**
   * The job definitions of environment images (plan-shards): a sweep over tasks that name an image needs it, one
   * without does not. On AWS `BatchImageDefinitions` over the rollout definition (the plan-shards Lambda's
   * `ROLLOUT_JOB_DEFINITION_VARIABLE`); locally the rollout definition for every image.
   */
  imageDefinitions?: ImageJobDefinitions;
}

/** The plan-shards Lambda's variable naming the rollout job definition (ARN) whose clones run environment images. */
export const ROLLOUT_JOB_DEFINITION_VARIABLE = 'FLYWHEEL_ROLLOUT_JOB_DEFINITION';

/** Where plan-shards gets the job definition a shard whose tasks name `image` is submitted under. */
export interface ImageJobDefinitions {
  /** The job definition (an ARN on AWS) that runs the rollout command in `image`, registered first when needed. */
  forImage(image: string): Promise<string>;
}

export interface SweepStepIo {
  'validate-sweep': [SweepExecutionInput, ValidatedSweep];
  'plan-shards': [PlanShardsInput, ShardPlan];
  'aggregate-shard': [AggregateShardInput, ShardOutcome];
  'record-shard-failure': [RecordShardFailureInput, ShardOutcome];
  'compare-incumbent': [SweepIdInput, IncumbentComparison];
  'check-saturation': [SweepIdInput, SaturationCheck];
  notify: [NotifyInput, SweepNotice];
}

export type SweepStep<K extends SweepStepName> = (ports: SweepStepPorts, input: SweepStepIo[K][0]) => Promise<SweepStepIo[K][1]>;

/**
 * One function per step. The implementations live with the use cases: `sweepStepHandlers()` in
 * `lib/sweeps/sweep-step-handlers.ts` (`lib/sweeps/<step>.ts` with their settings bound). The Lambda entries
 * (`functions/sweeps/<step>.ts`) and the local runtime call it; tests may pass their own `SweepSteps`.
 */
export type SweepSteps = { [K in SweepStepName]: SweepStep<K> };

/**
 * Bounds of one sweep (see DESIGN.md, limits). The plan sits in one state: 256 KiB / ≈ 200 bytes per ShardRef ≈ 1,300,
 * and the Map's result (≈ 120 bytes per ShardOutcome) replaces it; 1,000 leaves room for the rest of the state.
 * A larger sweep is split into several sweeps by whoever asks for it (plan-shards throws `Flywheel.ValidationError`).
 */
export const MAX_SWEEP_SHARDS = 1000;
