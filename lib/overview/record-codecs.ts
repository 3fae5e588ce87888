/**
 * The overview's record codecs (keys in `record-keys.ts`).
 *
 * @example
 * await records.put(feedbackHourRecord.encode({ hour: '2026-12-02T10', events: 3, up: 1, down: 2, computedAt }));
 */
import { z } from 'zod';
import { defineRecordCodec } from '../shared/record-codec.ts';
import { overviewKeys } from './record-keys.ts';

export const FeedbackCounts = z.object({ events: z.number().int(), up: z.number().int(), down: z.number().int() });
export type FeedbackCounts = z.output<typeof FeedbackCounts>;

export const feedbackHourRecord = defineRecordCodec({
  kind: 'feedback hour',
  schema: FeedbackCounts.extend({ hour: z.string(), computedAt: z.string() }),
  keys: (r) => overviewKeys.feedbackHour(r.hour),
});
