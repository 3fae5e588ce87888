/**
 * The shard spec a rollout job reads (from the blob named by FLYWHEEL_SHARD_KEY, or inline in FLYWHEEL_SHARD_SPEC):
 * which tasks, which model, which harness mode, how many attempts, and where results go. One spec serves every
 * child of the array job; each child takes its slice by AWS_BATCH_JOB_ARRAY_INDEX (`shardTasks`). Pass keys, not
 * bodies: tasks are blob keys of task JSON files (or, locally, a suite folder).
 *
 * This is the one definition of every field the job reads: a sweep's shard spec (`lib/sweeps/shard-spec.ts`) is
 * `ShardSpecFields` extended with the sweep's bookkeeping, so the very same blob drives the job.
 *
 * @example
 * { "schemaVersion": 1, "runId": "sweep-7.ckpt-3.calc.strict", "taskKeys": ["suites/calc/v2/tasks/add.json"],
 *   "model": "openai:qwen3-coder@http://127.0.0.1:8000/v1", "mode": "strict", "attempts": 4,
 *   "outputPrefix": "sweeps/sweep-7/shards/ckpt-3/calc/strict" }
 */
import { z } from 'zod';
import { ValidationError } from '../errors.ts';
import { HarnessModeSchema } from '../harness/task/harness-mode.ts';
import { VllmPortSchema } from './vllm-port.ts';

export const SHARD_SPEC_SCHEMA_VERSION = 1 as const;

/** The variable naming the simulated user's model spec (the eval CLI, the rollout job and the sweep planner read it). */
export const USER_MODEL_ENV = 'FLYWHEEL_USER_MODEL';

/** Run ids the rollout job accepts: each child records its attempts under `<runId>.shard-<index>`. */
export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * How the job serves the checkpoint beside the harness: the command line (`$FLYWHEEL_VLLM_PORT` and
 * `$FLYWHEEL_CHECKPOINT_DIR` left to the shell), the served model name and the port (default 8000).
 * FLYWHEEL_VLLM_COMMAND / FLYWHEEL_VLLM_MODEL / FLYWHEEL_VLLM_PORT override them.
 */
export const VllmServeSchema = z.object({ command: z.string().min(1), servedModelName: z.string().min(1).optional(), port: VllmPortSchema.optional() });

/** Every field of the spec, before the rule that ties `taskKeys` and `suiteDir`: the base a sweep's spec extends. */
export const ShardSpecFields = z.object({
  schemaVersion: z.literal(SHARD_SPEC_SCHEMA_VERSION),
  /** The eval run this shard belongs to; each shard records its attempts under `<runId>.shard-<index>`. */
  runId: z.string().regex(RUN_ID_PATTERN, 'letters, digits, . _ - only'),
  /** The suite's name, recorded with the results. */
  suite: z.string().min(1).optional(),
  /** Blob keys of task JSON files (the task format of lib/harness/task). */
  taskKeys: z.array(z.string().min(1)).min(1).optional(),
  /** Or a folder of task JSON files on this machine (local runs). */
  suiteDir: z.string().min(1).optional(),
  /**
   * With `suiteDir`: only these tasks of the folder, in this order, before the children deal them: one image group
   * of a suite (`flywheel eval run --jobs` over tasks of several environment images runs one job per image).
   * Absent: every task. With `taskKeys` the keys are the selection (a sweep's spec carries `taskIds` aligned with
   * them, for its own bookkeeping) and this is not read.
   */
  taskIds: z.array(z.string().min(1)).min(1).optional(),
  /** A model spec (`openai:<model>@<baseUrl>`, `bedrock:<id>`); optional when FLYWHEEL_VLLM_COMMAND serves one. */
  model: z.string().min(1).optional(),
  /**
   * The rubric judge's model spec, for tasks graded by a judge (`task.grading.by` judge/both); default the job's
   * FLYWHEEL_JUDGE_MODEL. Without one, such tasks end `ungraded` (`judge-not-configured`), never passed.
   */
  judgeModel: z.string().min(1).optional(),
  /**
   * The model spec of the simulated user of behavioural cases (`task.behaviour.simulatedUser`); default the job's
   * FLYWHEEL_USER_MODEL (`USER_MODEL_ENV`). Without one, such cases end as infrastructure errors (configuration).
   */
  userModel: z.string().min(1).optional(),
  /** The checkpoint under test, recorded in trajectories as the policy version. */
  checkpoint: z.string().min(1).optional(),
  weightVersion: z.union([z.string(), z.number()]).optional(),
  mode: HarnessModeSchema,
  /** Attempts per task (the k of pass@k). */
  attempts: z.number().int().min(1).max(100),
  /** Attempts at a time inside the shard. */
  concurrency: z.number().int().min(1).max(64).default(1),
  /** Tries per attempt when the infrastructure fails, and the base backoff between them. */
  maxTries: z.number().int().min(1).max(10).default(3),
  retryDelayMs: z.number().int().min(0).default(2000),
  /** Shards in the array; FLYWHEEL_SHARD_COUNT overrides it. Default 1. */
  shardCount: z.number().int().min(1).max(10_000).optional(),
  /** Serve the checkpoint beside the harness (`VllmServeSchema`). */
  vllm: VllmServeSchema.optional(),
  /** Blob key of the checkpoint (a tarball, or one file) unpacked into FLYWHEEL_CHECKPOINT_DIR before vLLM starts. */
  artifactKey: z.string().min(1).optional(),
  /**
   * The environment image this shard's tasks name (`task.environment.image`): on AWS the job runs under the job
   * definition for that image (`JobSubmission.image`); absent, the rollout image with the cached environment of each
   * task's lockfiles. A shard holds tasks of one image only (`groupTasksByImage`).
   */
  environmentImage: z.string().min(1).max(255).optional(),
  /** Results go to `<outputPrefix>/shard-<index>.json`. */
  outputPrefix: z.string().min(1).regex(/^[^/].*[^/]$|^[^/]$/, 'no leading or trailing slash'),
});

export const ShardSpecSchema = ShardSpecFields.refine((s) => (s.taskKeys === undefined) !== (s.suiteDir === undefined), {
  message: 'exactly one of taskKeys and suiteDir',
  path: ['taskKeys'],
});

export type ShardSpec = z.infer<typeof ShardSpecSchema>;
export type ShardSpecInput = z.input<typeof ShardSpecSchema>;

/**
 * Validates the spec a rollout job was handed; throws `Flywheel.ValidationError` naming `source` and each offending field.
 *
 * @example
 * const spec = parseShardSpec(JSON.parse(process.env.FLYWHEEL_SHARD_SPEC!), 'FLYWHEEL_SHARD_SPEC');
 */
export function parseShardSpec(json: unknown, source: string): ShardSpec {
  const result = ShardSpecSchema.safeParse(json);
  if (!result.success) {
    const issues = result.error.issues.map((i) => ({ path: i.path.join('.') || '(root)', message: i.message }));
    throw new ValidationError(`shard spec ${source} is invalid: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
  }
  return result.data;
}
