/**
 * The shapes the training capability shares between its parts: a decision record (one bad decision in a rollout, with
 * the hint a teacher gets at that point), a dataset's manifest and the columns of its Parquet shards, and a training
 * run. The schemas are the types; the trainer image (`batch-images/trainer/`) reads the shards by the column names
 * exported here (`SHARD_COLUMNS`), and its job by the variables of `TRAINER_JOB_ENV`.
 */
import { z } from 'zod';

const Id = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:@+=/-]*$/, 'letters, digits and . _ : @ + = / - only (no # or spaces), starting with a letter or digit');
const IsoDateTime = z.iso.datetime({ offset: true });

// ---------------------------------------------------------------------------------------------------------------
// Decision records
// ---------------------------------------------------------------------------------------------------------------

/**
 * What kind of hint a teacher gets at the decision:
 * - `available-tools`: the tools that really exist (after the student called one that does not);
 * - `tool-arguments`: the tool's parameter schema and what was wrong with the arguments;
 * - `tool-unavailable`: the tool is gone at this point of the episode, and what is left;
 * - `sandbox-rules`: the harness's rules (no network, no history) after a blocked shortcut;
 * - `person-comment`: a person's comment on that message;
 * - `judge-criterion`: the failed rubric criterion the judge's evidence quotes from that message;
 * - `model-located`: a model found the first wrong decision of a failed trajectory and wrote the hint.
 */
export const HINT_CLASSES = ['available-tools', 'tool-arguments', 'tool-unavailable', 'sandbox-rules', 'person-comment', 'judge-criterion', 'model-located'] as const;
export const HintClassSchema = z.enum(HINT_CLASSES);
export type HintClass = z.infer<typeof HintClassSchema>;

/** Where a decision record came from. */
export const DecisionSourceSchema = z.discriminatedUnion('kind', [
  /** A harness event of the trajectory (`tool.unknown`, `tool.bad-arguments`, `tool.unavailable`, `network.blocked`, `git.history-needed`). */
  z.strictObject({ kind: z.literal('harness-event'), eventKind: z.string(), eventSeq: z.number().int() }),
  /** A person's thumbs-down (or comment) with a `messageId` on a consented trajectory: the comment is the hint. */
  z.strictObject({ kind: z.literal('person'), feedbackEventId: z.string(), userHash: z.string().optional() }),
  /** A judge's failed criterion whose quoted evidence sits in one assistant message. */
  z.strictObject({ kind: z.literal('judge'), judge: z.string(), criterion: z.string(), quote: z.string() }),
  /** A model that located the first wrong decision of a failed trajectory. */
  z.strictObject({ kind: z.literal('locator-model'), model: z.string(), reason: z.string() }),
]);
export type DecisionSource = z.infer<typeof DecisionSourceSchema>;
export const DECISION_SOURCE_KINDS = ['harness-event', 'person', 'judge', 'locator-model'] as const;

/** The trajectory a decision belongs to. */
export const TrajectoryRefSchema = z.strictObject({
  /** The trajectory's JSON Lines blob. */
  blobKey: z.string().min(1).max(1024),
  attemptId: z.string(),
  taskId: z.string().optional(),
  suite: z.string().optional(),
  /** The eval run (or sweep shard run) whose attempt it is. */
  runId: z.string().optional(),
  /** The feedback event it came with (production trajectories). */
  feedbackEventId: z.string().optional(),
  /** The policy that produced it, as the trajectory's header says. */
  checkpoint: z.string().optional(),
});
export type TrajectoryRef = z.infer<typeof TrajectoryRefSchema>;

/** The result of the leakage check: a hint carries nothing the student could not have known. */
export const LeakageCheckSchema = z.strictObject({
  passed: z.boolean(),
  /** What leaked: a hidden test's name, a literal of a hidden test, a line of the reference patch, … */
  findings: z.array(z.strictObject({ kind: z.string(), text: z.string().max(500) })),
  checkedAt: IsoDateTime,
  /** The checker's version (`LEAKAGE_CHECKER`): a verdict of an older checker is checked again. */
  checker: z.string().optional(),
  /** A digest of the task's secrets the hint was checked against: other secrets, checked again. */
  secretsDigest: z.string().optional(),
});
export type LeakageCheck = z.infer<typeof LeakageCheckSchema>;

export const DECISION_STATUSES = ['usable', 'rejected'] as const;

export const DecisionRecordSchema = z.strictObject({
  /** Deterministic: 20 hex of a hash of the trajectory blob key, the message id and the source; extraction is idempotent. */
  decisionId: z.string().regex(/^dec-[0-9a-f]{20}$/),
  trajectory: TrajectoryRefSchema,
  /** The assistant message (`<attemptId>:m<turn>`) that made the bad decision. */
  messageId: z.string().min(1).max(256),
  turn: z.number().int().nonnegative(),
  /**
   * The decision's tokens, as indexes into that message's completion token ids ([start, end)); absent when the
   * trajectory has no token ids (a hosted API): the dataset builder then takes the whole message.
   */
  tokenSpan: z.strictObject({ start: z.number().int().nonnegative(), end: z.number().int().positive() }).optional(),
  /** The decision's characters in the message (the tool call's name or arguments, or the content), when known. */
  charSpan: z.strictObject({ field: z.enum(['content', 'arguments', 'tool-name']), toolCallId: z.string().optional(), start: z.number().int(), end: z.number().int() }).optional(),
  hintClass: HintClassSchema,
  hint: z.strictObject({
    text: z.string().min(1).max(8000),
    /** `rule`: written by code from what the harness knew; `model`: written by a model (named). */
    by: z.enum(['rule', 'model', 'person']),
    model: z.string().optional(),
  }),
  /**
   * Where the teacher's prefill gets the hint: right before the decision's first completion token (the hint's
   * positions are sliced off the teacher's log-probs, so the teacher scores exactly the student's tokens).
   */
  insertion: z.strictObject({ at: z.literal('before-decision'), role: z.enum(['system', 'user']).default('user') }),
  source: DecisionSourceSchema,
  leakage: LeakageCheckSchema,
  /** Bumped by every rewrite of the stored record (a re-check, a dataset added to its lineage): the conditional write compares it. */
  revision: z.number().int().nonnegative().optional(),
  /** `rejected`: the leakage check failed (kept to be seen, never trained on). */
  status: z.enum(DECISION_STATUSES),
  lineage: z.strictObject({
    /** The extractor (code version) or person that made the record. */
    createdBy: z.string(),
    createdAt: IsoDateTime,
    /** Datasets that used it. */
    datasets: z.array(z.string()).default([]),
  }),
});
export type DecisionRecord = z.infer<typeof DecisionRecordSchema>;

// ---------------------------------------------------------------------------------------------------------------
// Datasets
// ---------------------------------------------------------------------------------------------------------------

/**
 * The columns of a training shard (Parquet, one row per training sequence; lists are Parquet LIST columns).
 * Token positions index `input_ids`. The trainer reads these names (`batch-images/trainer/flywheel_trainer/shards.py`).
 */
export const SHARD_COLUMNS = {
  sampleId: 'sample_id', // string: `<attemptId>#<first turn>`
  groupId: 'group_id', // string: the attempts of one task in one run (GRPO's group)
  taskId: 'task_id', // string
  attemptId: 'attempt_id', // string
  policyCheckpoint: 'policy_checkpoint', // string ('' when unknown)
  policyVersion: 'policy_version', // string ('' when unknown)
  inputIds: 'input_ids', // list<int32>: prompt + completion tokens exactly as sampled, never re-tokenised
  lossMask: 'loss_mask', // list<int32> 0/1: 1 on the model's own tokens only (tool output, prompts: 0)
  behaviourLogprobs: 'behaviour_logprobs', // list<float>: the sampler's log-prob per position (0 where loss_mask is 0)
  reward: 'reward', // double: the reward specification's reward of the attempt, in [-1, 1]
  hasTokenIds: 'has_token_ids', // bool: false → text-only rollout (hosted API): kept out of the policy-gradient term
  spanStarts: 'span_starts', // list<int32>: a decision's first token position
  spanEnds: 'span_ends', // list<int32>: one past its last
  spanDecisionIds: 'span_decision_ids', // list<string>
  spanHints: 'span_hints', // list<string>: the hint text, tokenised by the trainer with the model's tokenizer
  spanVerified: 'span_verified', // list<bool>: the teacher's own choice was verified (tests passed after it)
} as const;

/** The manifest blob of a dataset (`training/datasets/<datasetId>/manifest.json`). */
export const DatasetManifestSchema = z.strictObject({
  datasetId: Id,
  createdAt: IsoDateTime,
  /** Column layout version (bumped when `SHARD_COLUMNS` changes other than by adding). */
  format: z.literal('flywheel.training-shards/1'),
  shards: z.array(z.strictObject({ key: z.string(), rows: z.number().int(), tokens: z.number().int() })),
  rows: z.number().int(),
  tokens: z.number().int(),
  /** Rows with exact token ids (policy-gradient rows). */
  tokenRows: z.number().int(),
  /** Rows of text-only rollouts (no token ids): marked, kept out of the policy-gradient term. */
  textOnlyRows: z.number().int(),
  decisionSpans: z.number().int(),
  /** The reward specification used (suite → spec as stored), absent when rewards are tests alone. */
  rewardSpecs: z.record(z.string(), z.unknown()).default({}),
  decisions: z.array(z.string()),
  /** The rollouts used, each with its consent (production trajectories need `trainingConsent: true`). */
  sources: z.array(
    z.strictObject({
      attemptId: z.string(),
      trajectoryKey: z.string(),
      runId: z.string().optional(),
      feedbackEventId: z.string().optional(),
      consent: z.enum(['harness', 'feedback-consent']),
    }),
  ),
  /** What was left out, and why (no consent, no trajectory, infrastructure error, malformed). */
  excluded: z.array(z.strictObject({ ref: z.string(), reason: z.string() })),
  tokenizer: z.string().optional(),
});
export type DatasetManifest = z.infer<typeof DatasetManifestSchema>;

// ---------------------------------------------------------------------------------------------------------------
// Training runs
// ---------------------------------------------------------------------------------------------------------------

/** What the dataset is built from. */
export const DatasetSelectionSchema = z.strictObject({
  /** Eval runs (`flywheel eval run`) or sweep shard runs whose attempts are rollouts. */
  runs: z.array(z.string().min(1).max(300)).max(200).default([]),
  /** Sweeps: every run of their shards. */
  sweeps: z.array(Id).max(50).default([]),
  /** Production feedback with trajectories (training consent required), by stored time. */
  feedback: z.strictObject({ since: IsoDateTime.optional(), until: IsoDateTime.optional(), limit: z.number().int().min(1).max(100_000).default(10_000) }).optional(),
  /** Decision records to use: all usable ones of the selected trajectories (default), or none. */
  decisions: z.enum(['all', 'none']).default('all'),
});
export type DatasetSelection = z.infer<typeof DatasetSelectionSchema>;

/** The trainer's settings (passed to the job as `FLYWHEEL_TRAIN_CONFIG`, JSON). Loss weights are per term. */
export const TrainerConfigSchema = z.strictObject({
  steps: z.number().int().min(1).max(1_000_000).default(20),
  learningRate: z.number().positive().max(1).default(1e-4),
  /** Sequences per optimiser step. */
  batchSize: z.number().int().min(1).max(4096).default(8),
  /** Weight of the Dr. GRPO outcome term. */
  outcomeWeight: z.number().min(0).max(100).default(1),
  /** Weight of the decision-point (textual feedback) term. */
  decisionWeight: z.number().min(0).max(100).default(1),
  /** Weight of the term pulling up the teacher's own choice on verified decisions (0: off). */
  teacherChoiceWeight: z.number().min(0).max(100).default(0),
  /** Truncation of the importance ratio between the current and the behaviour policy (TIS cap). */
  importanceCap: z.number().min(1).max(100).default(2),
  /** A_t = clip(log π_teacher − log π_behaviour, −clip, clip). */
  advantageClip: z.number().positive().max(50).default(5),
  /** LoRA through peft instead of a full fine-tune. */
  lora: z.strictObject({ rank: z.number().int().min(1).max(256).default(8), alpha: z.number().positive().default(16) }).optional(),
  seed: z.number().int().min(0).max(2 ** 31 - 1).default(0),
  /** Save a resumable state every this many steps. */
  saveEvery: z.number().int().min(1).default(10),
  /** GPUs per node (torchrun's processes) and nodes (a Batch multi-node parallel job when above 1). */
  gpus: z.number().int().min(0).max(8).default(1),
  nodes: z.number().int().min(1).max(16).default(1),
});
export type TrainerConfig = z.infer<typeof TrainerConfigSchema>;

export const TrainingRunInputSchema = z.strictObject({
  /** Names the run (and its execution); derived from the request when absent. */
  runId: Id.optional(),
  /** The checkpoint trained from (registry id; its artifact is the starting weights), or `tiny:<seed>` for the in-code tiny model. */
  base: z.string().min(1).max(200),
  dataset: DatasetSelectionSchema,
  trainer: TrainerConfigSchema.default(TrainerConfigSchema.parse({})),
  /** The checkpoint id to register (default `<base model>:<runId>`). */
  checkpointId: Id.optional(),
  /** Sweep the new checkpoint (default true), and propose an A/B test when it beats the incumbent (default true). */
  sweep: z.boolean().default(true),
  proposeExperiment: z.boolean().default(true),
  /** Minutes without a heartbeat before people are told the run stalled. */
  stallMinutes: z.number().int().min(1).max(24 * 60).default(30),
});
export type TrainingRunInput = z.input<typeof TrainingRunInputSchema>;
export type TrainingRunRequest = z.output<typeof TrainingRunInputSchema>;

export const TRAINING_RUN_STATUSES = ['queued', 'building-dataset', 'training', 'registering', 'evaluating', 'succeeded', 'failed', 'stopped'] as const;
export const TrainingRunStatusSchema = z.enum(TRAINING_RUN_STATUSES);
export type TrainingRunStatus = z.infer<typeof TrainingRunStatusSchema>;
export const TERMINAL_TRAINING_RUN_STATUSES: readonly TrainingRunStatus[] = ['succeeded', 'failed', 'stopped'];

export const TrainingRunSchema = z.strictObject({
  runId: Id,
  request: TrainingRunInputSchema,
  status: TrainingRunStatusSchema,
  createdAt: IsoDateTime,
  updatedAt: IsoDateTime,
  createdBy: z.string().optional(),
  datasetId: z.string().optional(),
  /** Blob key of the dataset's manifest. */
  datasetKey: z.string().optional(),
  jobId: z.string().optional(),
  /** The last step the trainer reported, and when (its heartbeat). */
  step: z.number().int().nonnegative().optional(),
  lastHeartbeatAt: IsoDateTime.optional(),
  stallNotifiedAt: IsoDateTime.optional(),
  checkpointId: z.string().optional(),
  /** Blob prefix of the checkpoint's files. */
  artifactKey: z.string().optional(),
  sweepId: z.string().optional(),
  /** The sweep's comparison with the incumbent, in brief. */
  comparison: z.record(z.string(), z.unknown()).optional(),
  /** The A/B test proposed when the checkpoint beat the incumbent. */
  proposal: z.record(z.string(), z.unknown()).optional(),
  error: z.strictObject({ error: z.string(), cause: z.string() }).optional(),
  endedAt: IsoDateTime.optional(),
  /** The workflow execution running the run now (the newest one after a resume). */
  executionId: z.string().optional(),
  /** How many times the run was resumed (its execution is `<run>-r<n>` after the n-th). */
  resumes: z.number().int().nonnegative().optional(),
  /** Bumped by every write: the optimistic-concurrency field (a stop and a step never overwrite each other). */
  revision: z.number().int().nonnegative().optional(),
  /** Who stopped it, when stopped by a person. */
  stoppedBy: z.string().optional(),
  /**
   * The base as resolved when the run was requested (`resolveBase`): the trainer's base, the model family and the
   * parent checkpoint. Kept so a base retired later still trains and registers the run it was asked for.
   */
  resolvedBase: z.strictObject({ trainerBase: z.string(), model: z.string(), parent: z.string().optional() }).optional(),
});
export type TrainingRun = z.infer<typeof TrainingRunSchema>;

/** The environment of the trainer's policy job (`python -m flywheel_trainer policy-job`). */
export const TRAINER_JOB_ENV = {
  runId: 'FLYWHEEL_TRAIN_RUN_ID',
  /** Blob key of the dataset manifest. */
  datasetKey: 'FLYWHEEL_DATASET_KEY',
  /** `tiny:<seed>`, or `blob:<prefix>` of a checkpoint folder (HF layout) staged from blobs. */
  base: 'FLYWHEEL_BASE_MODEL',
  /** `TrainerConfig` as JSON. */
  config: 'FLYWHEEL_TRAIN_CONFIG',
  /** Blob prefix the checkpoint folder is written under (`training/runs/<runId>/checkpoint`). */
  outputKey: 'FLYWHEEL_OUTPUT_KEY',
  /** Blob key of the metrics JSON Lines (one line per step; its freshness is the heartbeat). */
  metricsKey: 'FLYWHEEL_METRICS_KEY',
  /** Blob prefix of the resumable state (weights, optimiser, RNG, step). */
  stateKey: 'FLYWHEEL_STATE_KEY',
} as const;

/** Blob keys of a run's files. */
export function trainingRunKeys(runId: string) {
  const root = `training/runs/${runId}`;
  return {
    root,
    checkpoint: `${root}/checkpoint`,
    metrics: `${root}/metrics.jsonl`,
    /** A small JSON the trainer rewrites every step (`{ step, at }`): the stall check reads it before the metrics. */
    heartbeat: `${root}/heartbeat.json`,
    state: `${root}/state`,
    curves: `${root}/curves.png`,
  } as const;
}

/** Blob keys of a dataset's files. */
export function datasetKeys(datasetId: string) {
  const root = `training/datasets/${datasetId}`;
  return { root, manifest: `${root}/manifest.json`, shard: (n: number) => `${root}/shard-${String(n).padStart(5, '0')}.parquet` } as const;
}

/** One line of a run's metrics (what the trainer writes per step; extra fields are kept). */
export const TrainingMetricsLineSchema = z.looseObject({
  step: z.number().int().nonnegative(),
  at: z.string(),
  loss: z.number(),
  tokens: z.number().int().nonnegative().optional(),
  stepSeconds: z.number().nonnegative().optional(),
});
export type TrainingMetricsLine = z.infer<typeof TrainingMetricsLineSchema>;
