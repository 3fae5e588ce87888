/**
 * One codec per record kind of the training capability (keys in `record-keys.ts`).
 *
 * @example
 * await records.put(trainingRunRecord.encode(run));
 * const run = trainingRunRecord.decodeIfPresent(await records.get(k.pk, k.sk));
 */
import { defineRecordCodec } from '../shared/record-codec.ts';
import { z } from 'zod';
import { decisionRecordKeys, trainingRunRecordKeys } from './record-keys.ts';
import { DecisionRecordSchema, TrainingRunSchema } from './schemas.ts';

/** A training run, listed newest first (gsi1) and by status (gsi2). */
export const trainingRunRecord = defineRecordCodec({
  kind: 'training run',
  schema: TrainingRunSchema,
  keys: (r) => ({
    ...trainingRunRecordKeys.run(r.runId),
    gsi1pk: trainingRunRecordKeys.all,
    gsi1sk: trainingRunRecordKeys.order(r.createdAt, r.runId),
    gsi2pk: trainingRunRecordKeys.byStatus(r.status),
    gsi2sk: trainingRunRecordKeys.order(r.createdAt, r.runId),
  }),
});

/** A decision record, under its attempt (listed per attempt), newest first over all (gsi1) and per run (gsi2). */
export const decisionRecord = defineRecordCodec({
  kind: 'decision record',
  schema: DecisionRecordSchema,
  keys: (d) => ({
    ...decisionRecordKeys.decision(d.trajectory.attemptId, d.decisionId),
    gsi1pk: decisionRecordKeys.all,
    gsi1sk: decisionRecordKeys.order(d.lineage.createdAt, d.decisionId),
    gsi2pk: decisionRecordKeys.byRun(d.trajectory.runId),
    gsi2sk: decisionRecordKeys.order(d.lineage.createdAt, d.decisionId),
  }),
});

/** Where a decision record is stored, by its id alone (`GET /v1/decisions/{decisionId}`). */
export const decisionLookupRecord = defineRecordCodec({
  kind: 'decision lookup',
  schema: z.object({ decisionId: z.string(), attemptId: z.string() }),
  keys: (l) => decisionRecordKeys.lookup(l.decisionId),
});
