/**
 * Failure modes over time (`GET /v1/failure-modes/timeline`): per checkpoint and per day (or ISO week), the count of
 * each mode and its rate over the classified signals of that bucket (signals the chain or a person labelled, with or
 * without a mode). Read from the tally rows (`MODETALLY#<model>#<day>`), one partition per checkpoint and day.
 */
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

extendZodWithOpenApi(z);

/** Days a timeline spans at most. */
export const MAX_TIMELINE_DAYS = 92;
/** Checkpoints one timeline shows at most. */
export const MAX_TIMELINE_CHECKPOINTS = 10;

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const CHECKPOINT_LIST = /^[A-Za-z0-9._:@+=\/-]+(,[A-Za-z0-9._:@+=\/-]+)*$/;

export const FailureModeTimelineQuery = z
  .strictObject({
    from: z.string().regex(DAY, 'a day, YYYY-MM-DD').optional().openapi({ description: 'First day (UTC). Absent: 30 days before `to`.' }),
    to: z.string().regex(DAY, 'a day, YYYY-MM-DD').optional().openapi({ description: 'Last day (UTC), included. Absent: today.' }),
    checkpoint: z.string().max(2000).regex(CHECKPOINT_LIST, 'one checkpoint id or several separated by commas').optional().openapi({ description: `Absent: the first ${MAX_TIMELINE_CHECKPOINTS} checkpoints with signals, by id.` }),
    bucket: z.enum(['day', 'week']).default('day'),
  })
  .openapi('FailureModeTimelineQuery');
export type FailureModeTimelineQuery = z.input<typeof FailureModeTimelineQuery>;

export const TimelinePointSchema = z
  .object({
    /** The bucket's first day (a week starts on Monday). */
    start: z.string(),
    signals: z.number().int(),
    /** Signals with a label (a mode or "no mode"), the rate's denominator. */
    classified: z.number().int(),
    /** Per mode: its count and count / classified (null when nothing was classified). */
    modes: z.record(z.string(), z.object({ count: z.number().int(), rate: z.number().nullable() })),
  })
  .openapi('FailureModeTimelinePoint');
export type TimelinePoint = z.infer<typeof TimelinePointSchema>;

export const FailureModeTimelineSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    bucket: z.enum(['day', 'week']),
    /** Every mode seen in the range, most frequent first. */
    modes: z.array(z.string()),
    checkpoints: z.array(z.object({ checkpoint: z.string(), points: z.array(TimelinePointSchema) })),
  })
  .openapi('FailureModeTimeline');
export type FailureModeTimeline = z.infer<typeof FailureModeTimelineSchema>;
