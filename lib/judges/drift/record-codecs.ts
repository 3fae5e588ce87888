/** The stored records of the drift watch, one codec per kind (keys from `record-keys.ts`). */
import { z } from 'zod';
import { JudgeRefSchema } from '../judge-identity.ts';
import { defineRecordCodec } from '../../shared/record-codec.ts';
import { AnnotationReasonSchema } from '../annotation/annotation-item.ts';
import { driftKeys } from './record-keys.ts';

/** A production verdict next to a person's labels of the same subject: one point of the rolling window. */
export const DriftPairSchema = z.object({
  judge: JudgeRefSchema,
  itemId: z.string(),
  reason: AnnotationReasonSchema,
  judgeLabels: z.record(z.string(), z.string()),
  personLabels: z.record(z.string(), z.string()),
  annotator: z.string(),
  labelledAt: z.string(),
  /** The user disagreed with the judge on this verdict (the judge found nothing wrong, the user gave a thumbs-down). */
  userDisagreed: z.boolean().optional(),
});
export type DriftPair = z.infer<typeof DriftPairSchema>;

export const driftPairRecord = defineRecordCodec({
  kind: 'drift pair',
  schema: DriftPairSchema,
  keys: (p) => driftKeys.pair(p.judge, p.labelledAt, p.itemId, p.reason),
});

/** Where the local drift watch has read the event log up to. */
export const driftCursorRecord = defineRecordCodec({
  kind: 'drift watch cursor',
  schema: z.object({ seq: z.number().int().nonnegative() }),
  keys: () => driftKeys.localEventCursor,
});
