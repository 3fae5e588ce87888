/**
 * The shard spec: the work list of one shard of a sweep, written by `plan-shards` to the blob `ShardRef.shardKey`
 * (`sweeps/<sweepId>/shards/<shardId>.json`) and read by the rollout job (`batch-images/rollout/entrypoint.ts`, env
 * `FLYWHEEL_SHARD_KEY`). One shard = up to `sweeps.shardMaxTasks` tasks of one checkpoint × suite × mode, run as one
 * Batch array job of `arraySize` children.
 *
 * It extends the rollout job's own spec (`ShardSpecFields` of `lib/rollout/shard-spec.ts`), so every field the job
 * reads has one definition: here the fields a sweep always fills are required, the job's local-run fields (`suiteDir`,
 * tuning with defaults) are left out, and the sweep's bookkeeping is added, which the job ignores (zod strips it).
 * `test/sweeps/shard-spec.test.ts` checks that what plan-shards writes is a spec the job accepts. What the job does:
 * 1. child `AWS_BATCH_JOB_ARRAY_INDEX` takes `shardTasks(taskKeys, shardCount, index)` (task i → child i mod
 *    shardCount; `shardCount` = `arraySize`);
 * 2. it reads each task JSON from its blob (`taskKeys`, aligned with `taskIds`), talks to `model` (an endpoint's
 *    models-port spec), or to the vLLM server it starts from `vllm.command` when the checkpoint is served that way;
 * 3. it runs `runEval` under the run id `<runId>.shard-<index>`: attempt records at `pk EVAL#<runId>.shard-<index>`,
 *    `sk ATTEMPT#<taskId>#<mode>#<n>`, n < attempts, which `aggregate-shard` reads; runEval resumes, so a retried
 *    child never re-runs a finished attempt.
 *
 * Bump `schemaVersion` (`SHARD_SPEC_SCHEMA_VERSION`) on an incompatible change and keep a reader for the old one.
 */
import { z } from 'zod';
import { ValidationError } from '../errors.ts';
import { ServingSchema } from '../registry/schemas.ts';
import { ShardSpecFields, VllmServeSchema } from '../rollout/shard-spec.ts';

const job = ShardSpecFields.shape;

export const ShardSpecSchema = ShardSpecFields.omit({ suiteDir: true, weightVersion: true, concurrency: true, maxTries: true, retryDelayMs: true })
  .extend({
    // ── fields of the rollout job that a sweep's shard always has ──
    /** The suite id. */
    suite: job.suite.unwrap(),
    /** Blob keys of the task JSON files, in the order children slice them. */
    taskKeys: job.taskKeys.unwrap(),
    /** Task ids, aligned with `taskKeys`. */
    taskIds: job.taskIds.unwrap(),
    /** The checkpoint id, recorded as the trajectories' policy. */
    checkpoint: job.checkpoint.unwrap(),
    /** Children of the array job (= arraySize). */
    shardCount: job.shardCount.unwrap(),
    /**
     * For a vLLM-served checkpoint: the command line that serves it (the rollout job's `FLYWHEEL_VLLM_COMMAND`), with
     * `$FLYWHEEL_VLLM_PORT` and `$FLYWHEEL_CHECKPOINT_DIR` (where the job unpacks `artifactKey`) left to the shell, the
     * served model name, and the port it listens on (the checkpoint's `serving.port`; the job sets `$FLYWHEEL_VLLM_PORT`
     * to it). A spec planned before `port` was written has none: the job then uses its default, 8000, as it always did.
     */
    vllm: VllmServeSchema.extend({ servedModelName: VllmServeSchema.shape.servedModelName.unwrap() }).optional(),
    // ── the sweep's bookkeeping ──
    sweepId: z.string().min(1),
    shardId: z.string().regex(/^[A-Za-z0-9_-]+$/),
    /** 0-based position of this shard among its cell's shards. */
    shardIndex: z.number().int().min(0),
    suiteVersion: z.number().int().min(1),
    visibility: z.enum(['public', 'private']),
    checkpointModel: z.string().min(1),
    serving: ServingSchema,
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
