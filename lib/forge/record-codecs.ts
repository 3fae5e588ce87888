/**
 * One codec per record kind of the forge (keys in `record-keys.ts`): writers store `codec.encode(value)`, readers
 * take `codec.decode(item)`, so a record is checked where it is written and typed where it is read, and a malformed
 * one fails there as `MalformedRecordError` naming the record and the field.
 *
 * @example
 * await records.put(forgedTaskRecord.encode({ ...record, status: 'retired', retiredAt: at }));
 */
import { z } from 'zod';
import { TaskSchema } from '../harness/task/task-schema.ts';
import { defineRecordCodec } from '../shared/record-codec.ts';
import {
  ALL_FORGE_RUNS,
  BASELINE_SK,
  candidateSk,
  FORGE_RUN_PREFIX,
  FORGE_RUN_SK,
  forgeRunOrder,
  forgeRunPk,
  suiteIndexPk,
  TASK_SK,
  taskIndexSk,
  taskPk,
} from './record-keys.ts';
import { CandidateRecordSchema, FORGE_TASK_STATUSES } from './schemas.ts';

/** A certified task: its artifacts' blob keys, its status and calibration, and the task JSON when small. */
export const ForgedTaskRecordSchema = z.object({
  kind: z.literal('forge-task'),
  suite: z.string(),
  taskId: z.string(),
  split: TaskSchema.shape.split,
  status: z.enum(FORGE_TASK_STATUSES),
  /** Why it was retired (a re-certification that failed). */
  retiredReason: z.string().optional(),
  strategy: z.string(),
  runId: z.string(),
  failToPass: z.number().int(),
  passToPass: z.number().int(),
  /** Blob keys of the artifacts. */
  taskKey: z.string(),
  removalPatchKey: z.string(),
  referencePatchKey: z.string(),
  logKey: z.string(),
  repoKey: z.string(),
  canary: z.boolean().optional(),
  canaryOf: z.string().optional(),
  /** Difficulty calibration, when run. */
  passRate: z.number().optional(),
  calibration: z
    .object({
      model: z.string(),
      attempts: z.number().int(),
      passed: z.number().int(),
      band: z.tuple([z.number(), z.number()]).optional(),
      inBand: z.boolean().optional(),
      tooEasy: z.boolean().optional(),
      at: z.string(),
      runId: z.string().optional(),
    })
    .optional(),
  lastRecertifiedAt: z.string().optional(),
  retiredAt: z.string().optional(),
  /** The stored task JSON (repository as a blob reference), when small enough to inline. */
  task: TaskSchema.optional(),
  certifiedAt: z.string(),
  updatedAt: z.string(),
});
export type ForgedTaskRecord = z.infer<typeof ForgedTaskRecordSchema>;

export const forgedTaskRecord = defineRecordCodec({
  kind: 'forged task',
  schema: ForgedTaskRecordSchema,
  keys: (t) => ({ pk: taskPk(t.suite, t.taskId), sk: TASK_SK, gsi1pk: suiteIndexPk(t.suite), gsi1sk: taskIndexSk(t.taskId) }),
});

/** One forge run over a repository: running, then finished with its counts, or failed with its error. */
export const ForgeRunRecordSchema = z.object({
  kind: z.literal('forge-run'),
  runId: z.string(),
  suite: z.string(),
  origin: z.string(),
  sourceCommit: z.string(),
  status: z.enum(['running', 'finished', 'failed']),
  startedAt: z.string(),
  finishedAt: z.string().optional(),
  counts: z.record(z.string(), z.number()).optional(),
  error: z.string().optional(),
});
export type ForgeRunRecord = z.infer<typeof ForgeRunRecordSchema>;

export const forgeRunRecord = defineRecordCodec({
  kind: 'forge run',
  schema: ForgeRunRecordSchema,
  keys: (r) => ({ pk: forgeRunPk(r.runId), sk: FORGE_RUN_SK, gsi1pk: ALL_FORGE_RUNS, gsi1sk: forgeRunOrder(r.startedAt, r.runId) }),
});

/** A run's baseline in brief: counts and the flaky list (a large suite's outcomes would pass the 400 KB item limit). */
export const ForgeBaselineRecordSchema = z.object({
  kind: z.literal('forge-baseline'),
  runId: z.string(),
  runs: z.number().int(),
  collected: z.number().int(),
  stable: z.number().int(),
  skipped: z.number().int(),
  flaky: z.array(z.string()),
  durationsMs: z.array(z.number()),
  logKeys: z.array(z.string()),
});
export type ForgeBaselineRecord = z.infer<typeof ForgeBaselineRecordSchema>;

export const forgeBaselineRecord = defineRecordCodec({
  kind: 'forge baseline',
  schema: ForgeBaselineRecordSchema,
  keys: (b) => ({ pk: forgeRunPk(b.runId), sk: BASELINE_SK }),
  // The run id is the partition's: not stored twice.
  fromKeys: (keys) => ({ runId: keys.pk.slice(FORGE_RUN_PREFIX.length) }),
});

export const candidateRecord = defineRecordCodec({
  kind: 'forge candidate',
  schema: CandidateRecordSchema,
  keys: (c) => ({ pk: forgeRunPk(c.runId), sk: candidateSk(c.candidateId) }),
});
