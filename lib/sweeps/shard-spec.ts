/**
 * The shard spec: the work list of one shard of a sweep, written by `plan-shards` to the blob `ShardRef.shardKey`
 * (`sweeps/<sweepId>/shards/<shardId>.json`) and read by the rollout job (`batch-images/rollout/entrypoint.ts`, env
 * `FLYWHEEL_SHARD_KEY`). One shard = up to `sweeps.shardMaxTasks` tasks of one checkpoint × suite × mode, run as one
 * Batch array job of `arraySize` children.
 *
 * It is a superset of the rollout job's own spec (`lib/compute/shard-spec.ts`, the jobs helper's): every field that
 * spec reads is here with the meaning it gives it, so the very same blob drives the job, and the fields after it are
 * the sweep's bookkeeping, which the job ignores (zod strips them). `test/sweeps/shard-spec.test.ts` holds the two
 * together. What the job does with it:
 * 1. child `AWS_BATCH_JOB_ARRAY_INDEX` takes `shardTasks(taskKeys, shardCount, index)` (task i → child i mod
 *    shardCount; `shardCount` = `arraySize`);
 * 2. it reads each task JSON from its blob (`taskKeys`, aligned with `taskIds`), talks to `model` (an endpoint's
 *    models-port spec), or to the vLLM server it starts from `vllm.command` when the checkpoint is served that way;
 * 3. it runs `runEval` under the run id `<runId>.shard-<index>`: attempt records at `pk EVAL#<runId>.shard-<index>`,
 *    `sk ATTEMPT#<taskId>#<mode>#<n>`, n < attempts, which `aggregate-shard` reads; runEval resumes, so a retried
 *    child never re-runs a finished attempt.
 *
 * Bump `schemaVersion` on an incompatible change and keep a reader for the old one.
 */
import { z } from 'zod';
import { ValidationError } from '../errors.ts';
import { HarnessModeSchema, ServingSchema } from '../registry/schemas.ts';
import { VllmPortSchema } from '../compute/vllm-port.ts';

export const SHARD_SPEC_VERSION = 1 as const;

/** Run ids the rollout job accepts (`lib/compute/shard-spec.ts`). */
export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export const ShardSpecSchema = z
  .object({
    schemaVersion: z.literal(SHARD_SPEC_VERSION),
    // ── read by the rollout job (lib/compute/shard-spec.ts) ──
    /** This shard's run: child i records its attempts under `<runId>.shard-<i>`. */
    runId: z.string().regex(RUN_ID_PATTERN),
    /** The suite id. */
    suite: z.string().min(1),
    /** Blob keys of the task JSON files, in the order children slice them. */
    taskKeys: z.array(z.string().min(1)).min(1),
    /** Models-port spec of an endpoint (`openai:<model>@<baseUrl>`, `bedrock:<id>`); absent when `vllm` serves it. */
    model: z.string().min(1).optional(),
    /** The checkpoint id, recorded as the trajectories' policy. */
    checkpoint: z.string().min(1),
    mode: HarnessModeSchema,
    /** Attempts per task. */
    attempts: z.number().int().min(1).max(100),
    /** Children of the array job (= arraySize). */
    shardCount: z.number().int().min(1).max(10_000),
    /** Each child's result blob: `<outputPrefix>/shard-<index>.json`. */
    outputPrefix: z.string().min(1),
    /**
     * The environment image every task of the shard names (`task.environment.image`): the job runs under the job
     * definition for that image (`ShardRef.jobDefinition`) and refuses a task naming another. Absent: the rollout
     * image, each task with the cached environment of its lockfiles.
     */
    environmentImage: z.string().min(1).max(255).optional(),
    // ── the sweep's bookkeeping ──
    sweepId: z.string().min(1),
    shardId: z.string().regex(/^[A-Za-z0-9_-]+$/),
    /** 0-based position of this shard among its cell's shards. */
    shardIndex: z.number().int().min(0),
    /** Task ids, aligned with `taskKeys`. */
    taskIds: z.array(z.string().min(1)).min(1),
    suiteVersion: z.number().int().min(1),
    visibility: z.enum(['public', 'private']),
    checkpointModel: z.string().min(1),
    serving: ServingSchema,
    artifactKey: z.string().optional(),
    /**
     * For a vLLM-served checkpoint: the command line that serves it (the rollout job's `FLYWHEEL_VLLM_COMMAND`), with
     * `$FLYWHEEL_VLLM_PORT` and `$FLYWHEEL_CHECKPOINT_DIR` (where the job unpacks `artifactKey`) left to the shell, and
     * the port it listens on (the checkpoint's `serving.port`; the job sets `$FLYWHEEL_VLLM_PORT` to it). A spec
     * planned before `port` was written has none: the job then uses its default, 8000, as it always did.
     */
    vllm: z.object({ command: z.string().min(1), servedModelName: z.string().min(1), port: VllmPortSchema.optional() }).optional(),
    /** Batch array size (2–10,000); the same number as `shardCount`. */
    arraySize: z.number().int().min(2).max(10_000),
    createdAt: z.string(),
  })
  .refine((s) => s.taskIds.length === s.taskKeys.length, { message: 'taskIds and taskKeys must align', path: ['taskIds'] })
  .refine((s) => s.shardCount === s.arraySize, { message: 'shardCount must equal arraySize', path: ['shardCount'] })
  .refine((s) => (s.model === undefined) !== (s.vllm === undefined), { message: 'exactly one of model and vllm', path: ['model'] });
export type ShardSpec = z.infer<typeof ShardSpecSchema>;

/** The partitions a shard's attempts are in: one per array child (`EVAL#<runId>.shard-<i>`). */
export function shardAttemptRunIds(spec: Pick<ShardSpec, 'runId' | 'arraySize'>): string[] {
  return Array.from({ length: spec.arraySize }, (_, i) => `${spec.runId}.shard-${i}`);
}

/**
 * Validates a shard spec read from its blob; throws `Flywheel.ValidationError` naming each offending field.
 *
 * @example
 * const spec = parseShardSpec(JSON.parse(new TextDecoder().decode(await blobs.get(process.env.FLYWHEEL_SHARD_KEY!))));
 */
export function parseShardSpec(input: unknown): ShardSpec {
  const r = ShardSpecSchema.safeParse(input);
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => ({ path: i.path.map(String).join('.') || '(root)', message: i.message }));
  throw new ValidationError(`shard spec is not valid: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
}

/** Reads and validates the spec at `key`. */
export async function readShardSpec(blobs: { get(key: string): Promise<Uint8Array | undefined> }, key: string): Promise<ShardSpec> {
  const bytes = await blobs.get(key);
  if (!bytes) throw new ValidationError(`no shard spec at ${key}`, [{ path: 'shardKey', message: 'no such blob' }]);
  return parseShardSpec(JSON.parse(new TextDecoder().decode(bytes)));
}
