/**
 * One codec per record kind of the registry (keys in `record-keys.ts`): writers store `codec.encode(value)`, readers
 * take `codec.decode(item)`, so a record is checked where it is written and typed where it is read, and a malformed
 * one fails there as `MalformedRecordError` naming the record and the field.
 *
 * @example
 * await records.put(checkpointRecord.encode({ kind: 'checkpoint', ...checkpoint }), { condition: { kind: 'absent' } });
 * const stored = checkpointRecord.decodeIfPresent(await records.get(key.pk, key.sk));
 */
import { z } from 'zod';
import { defineRecordCodec } from '../shared/record-codec.ts';
import { registryKeys } from './record-keys.ts';
import { CheckpointView, SuiteBestPointView, SuiteView } from './schemas.ts';

/** A checkpoint as stored: the API view plus its kind. */
export const CheckpointRecordSchema = CheckpointView.extend({ kind: z.literal('checkpoint') });
export type CheckpointRecord = z.infer<typeof CheckpointRecordSchema>;

export const checkpointRecord = defineRecordCodec({
  kind: 'checkpoint',
  schema: CheckpointRecordSchema,
  keys: (c) => {
    const order = registryKeys.checkpointOrder(c.registeredAt, c.id);
    return { ...registryKeys.checkpoint(c.id), gsi1pk: registryKeys.allCheckpoints, gsi1sk: order, gsi2pk: registryKeys.checkpointsByModel(c.model), gsi2sk: order };
  },
});

/**
 * A suite as stored: the API view plus its task ids, the sweep that marked it saturated, and `revision`, the random
 * write id `updateSuite` conditions its writes on (absent on records written before it existed).
 */
export const SuiteRecordSchema = SuiteView.extend({
  kind: z.literal('suite'),
  taskIds: z.array(z.string()),
  saturatedBySweep: z.string().optional(),
  revision: z.string().optional(),
});
export type SuiteRecord = z.infer<typeof SuiteRecordSchema>;

export const suiteRecord = defineRecordCodec({
  kind: 'suite',
  schema: SuiteRecordSchema,
  keys: (s) => ({ ...registryKeys.suite(s.id), gsi1pk: registryKeys.allSuites, gsi1sk: s.id }),
});

/** One point of a suite's best-score series (the sweeps' check-saturation writes it, the suite detail reads it). */
export const SuiteBestPointRecordSchema = SuiteBestPointView.extend({ kind: z.literal('suite-best'), suite: z.string() });
export type SuiteBestPointRecord = z.infer<typeof SuiteBestPointRecordSchema>;

export const suiteBestPointRecord = defineRecordCodec({
  kind: 'suite best-score point',
  schema: SuiteBestPointRecordSchema,
  keys: (p) => registryKeys.suiteBestPoint(p.suite, p.at, p.sweepId),
});

/**
 * A task record (`TASK#<suite>#<taskId>`) as the registry reads it, whoever wrote it (the forge, an import): the task
 * JSON is its `task` attribute, or the blob `taskKey`, or the item itself; other attributes are kept. `suite` and
 * `taskId` name where it is stored.
 */
export const TaskRecordSchema = z.looseObject({
  suite: z.string().optional(),
  taskId: z.string().optional(),
  status: z.string().optional(),
  // Whoever wrote it: a `task` that is not an object, or a `taskKey` that is not a string, is not one (the reader
  // falls back to the next source, as readers always did) rather than a malformed record.
  taskKey: z.unknown().transform((v) => (typeof v === 'string' ? v : undefined)).optional(),
  task: z.unknown().transform((v) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined)).optional(),
});
export type TaskRecord = z.infer<typeof TaskRecordSchema>;

export const taskRecord = defineRecordCodec({
  kind: 'task',
  schema: TaskRecordSchema,
  keys: (t) => {
    if (t.suite === undefined || t.taskId === undefined) throw new TypeError('a task record names its suite and taskId to be stored');
    return registryKeys.task(t.suite, t.taskId);
  },
});

/**
 * The registry's incumbent (`INCUMBENT` / `CURRENT`): the checkpoint sweeps and experiments compare against, set when
 * an experiment ships. `revision` is what `setIncumbent` conditions its write on.
 */
export const IncumbentRecordSchema = z.object({
  kind: z.literal('incumbent'),
  checkpoint: z.string().min(1),
  since: z.iso.datetime({ offset: true }),
  experimentId: z.string().optional(),
  by: z.string(),
  revision: z.number().int().min(0),
});
export type IncumbentRecord = z.infer<typeof IncumbentRecordSchema>;

export const incumbentRecord = defineRecordCodec({ kind: 'incumbent', schema: IncumbentRecordSchema, keys: () => registryKeys.incumbent });

/** One change of the incumbent (`INCUMBENT` / `HISTORY#<since>#<checkpoint>`), kept so "who was incumbent when" has an answer. */
export const IncumbentHistoryRecordSchema = IncumbentRecordSchema.omit({ kind: true, revision: true }).extend({
  kind: z.literal('incumbent-history'),
  previous: z.string().optional(),
});
export type IncumbentHistoryRecord = z.infer<typeof IncumbentHistoryRecordSchema>;

export const incumbentHistoryRecord = defineRecordCodec({
  kind: 'incumbent history',
  schema: IncumbentHistoryRecordSchema,
  keys: (h) => registryKeys.incumbentHistory(h.since, h.checkpoint),
});
