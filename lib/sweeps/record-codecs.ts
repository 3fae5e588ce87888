/**
 * One codec per record kind of sweeps (keys in `record-keys.ts`): writers store `codec.encode(value)`, readers take
 * `codec.decode(item)`, so a record is checked where it is written and typed where it is read, and a malformed one
 * fails there as `MalformedRecordError` naming the record and the field.
 *
 * @example
 * await records.put(sweepRecord.encode(body));
 * const sweep = sweepRecord.decodeIfPresent(await records.get(key.pk, key.sk));
 */
import { z } from 'zod';
import { JudgeSummarySchema } from '../harness/eval/criterion-scores.ts';
import { HarnessModeSchema } from '../harness/task/harness-mode.ts';
import { ResultView } from '../registry/schemas.ts';
import { defineRecordCodec } from '../shared/record-codec.ts';
import { shardIndexOf, sweepKeys } from './record-keys.ts';
import { ComparisonView, SweepExecutionInputSchema, SweepRecordSchema } from './schemas.ts';

export const sweepRecord = defineRecordCodec({
  kind: 'sweep',
  schema: SweepRecordSchema,
  keys: (s) => ({ ...sweepKeys.sweep(s.sweepId), gsi1pk: sweepKeys.allSweeps, gsi1sk: sweepKeys.sweepOrder(s.requestedAt, s.sweepId) }),
});

/**
 * The execution input as stored: its shape, not the request limits. `startSweep` stores the selection it resolved
 * (every active suite may be more than the 100 a request may name); validate-sweep checks the limits and fails the
 * execution with a ValidationError, as it always did.
 */
const StoredSweepInputSchema = SweepExecutionInputSchema.extend({
  sweepId: z.string(),
  checkpoints: z.array(z.string()).optional(),
  suites: z.array(z.string()).optional(),
  modes: z.array(HarnessModeSchema).optional(),
  attemptsPerTask: z.number().int().optional(),
  requestedAt: z.string(),
  requestedBy: z.string().optional(),
});

/** The execution `startSweep` started (or is about to): its input, so a second start of the id reuses it. */
export const SweepExecutionRecordSchema = z.object({
  kind: z.literal('sweep-execution'),
  sweepId: z.string(),
  input: StoredSweepInputSchema,
  executionId: z.string().optional(),
  startedAt: z.string().optional(),
});
export type SweepExecutionRecord = z.infer<typeof SweepExecutionRecordSchema>;

export const sweepExecutionRecord = defineRecordCodec({
  kind: 'sweep execution',
  schema: SweepExecutionRecordSchema,
  keys: (e) => sweepKeys.execution(e.sweepId),
});

/** Per-task tallies a shard part and a cell keep for paired comparisons. */
export const TaskTallySchema = z.object({ taskId: z.string(), scored: z.number().int(), passed: z.number().int() });
export type TaskTally = z.infer<typeof TaskTallySchema>;

/** One shard's part of its cell: what that shard's attempts say (`RESULT#<sweep>` / `SHARD#…`). */
export const ShardPartRecordSchema = z.object({
  kind: z.literal('sweep-shard-result'),
  sweepId: z.string(),
  shardId: z.string(),
  shardIndex: z.number().int(),
  checkpoint: z.string(),
  suite: z.string(),
  mode: HarnessModeSchema,
  status: z.enum(['succeeded', 'failed']),
  /** The shard's run id: its child i's attempts are at `EVAL#<runId>.shard-<i>`. */
  runId: z.string(),
  arraySize: z.number().int(),
  perTask: z.array(TaskTallySchema),
  ungraded: z.number().int(),
  infrastructureErrors: z.number().int(),
  /** Judge-graded attempts of the shard: their mean rubric score and per-criterion tallies (`taskId:criterionId`). */
  judge: JudgeSummarySchema.optional(),
  jobId: z.string().optional(),
  error: z.string().optional(),
  /** Why, in words (Batch's StatusReason, a Lambda's errorMessage). */
  reason: z.string().optional(),
  cause: z.string().optional(),
  updatedAt: z.string(),
});
export type ShardPartRecord = z.infer<typeof ShardPartRecordSchema>;

export const shardPartRecord = defineRecordCodec({
  kind: 'sweep shard part',
  schema: ShardPartRecordSchema,
  // The index in the key is the shard id's, as the steps that address a part by its ShardRef compute it.
  keys: (p) => sweepKeys.shardPart(p.sweepId, p.checkpoint, p.suite, p.mode, shardIndexOf(p)),
});

/** A cell row: the API's result plus what comparisons need (per-task tallies inline, or the blob `perTaskKey`). */
export const CellRecordSchema = ResultView.extend({
  kind: z.literal('sweep-result'),
  attemptsPerTask: z.number().int(),
  /** Per-task tallies, inline while small; else in the blob `perTaskKey` (a large suite's list would not fit an item). */
  perTask: z.array(TaskTallySchema).optional(),
  perTaskKey: z.string().optional(),
  /** Judge-graded attempts of the cell: mean rubric score and per-criterion pass rates (`taskId:criterionId`). */
  judge: JudgeSummarySchema.optional(),
});
export type CellRecord = z.infer<typeof CellRecordSchema>;

export const cellRecord = defineRecordCodec({
  kind: 'sweep result',
  schema: CellRecordSchema,
  // The series indexes sort by the sweep's request time (`at`), so rewriting a cell moves nothing in them.
  keys: (c) => ({
    ...sweepKeys.cell(c.sweepId, c.checkpoint, c.suite, c.mode),
    gsi1pk: sweepKeys.resultSeries(c.checkpoint, c.suite, c.mode),
    gsi1sk: sweepKeys.resultSeriesSort(c.at, c.sweepId),
    gsi2pk: sweepKeys.suiteResults(c.suite, c.mode),
    gsi2sk: sweepKeys.suiteResultsSort(c.at, c.sweepId, c.checkpoint),
  }),
});

/** A checkpoint's comparison with the incumbent on a suite × mode (`SWEEP#<id>` / `COMPARE#…`). */
export const ComparisonRecordSchema = ComparisonView.extend({ kind: z.literal('sweep-comparison'), sweepId: z.string() });
export type ComparisonRecord = z.infer<typeof ComparisonRecordSchema>;

export const comparisonRecord = defineRecordCodec({
  kind: 'sweep comparison',
  schema: ComparisonRecordSchema,
  keys: (c) => sweepKeys.comparison(c.sweepId, c.checkpoint, c.suite, c.mode),
});
