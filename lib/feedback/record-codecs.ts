/**
 * The stored records of feedback, one codec per kind (keys from `record-keys.ts`): writers `encode`, readers `decode`,
 * and a record that does not match its kind fails where it is read, naming the record and the field.
 *
 * The schemas check the stored shape (types, enums), not the API's limits (id charset, byte bounds, JSON depth): those
 * are checked once at ingest (`schemas.ts`), so the processor's hot path parses each event once, cheaply.
 */
import { z } from 'zod';
import { defineRecordCodec } from '../shared/record-codec.ts';
import { feedbackKeys, utcDay } from './record-keys.ts';
import { FeedbackKind, FeedbackSource, Outcome, Rating, ReportSeverity } from './schemas.ts';

/** A feedback event as stored: the ingested event, the request that stored it, and the newer vote that replaced it. */
export const StoredFeedbackEvent = z.object({
  eventId: z.string(),
  feedbackKey: z.string(),
  kind: FeedbackKind,
  outcome: Outcome.optional(),
  traceId: z.string(),
  sessionId: z.string(),
  turnId: z.string(),
  messageId: z.string().optional(),
  model: z.string(),
  experiment: z.string().optional(),
  arm: z.string().optional(),
  workspaceId: z.string().optional(),
  rating: Rating,
  comment: z.string().optional(),
  source: FeedbackSource,
  reporter: z.string(),
  tags: z.array(z.string()).optional(),
  trainingConsent: z.boolean(),
  context: z.record(z.string(), z.unknown()).optional(),
  trajectory: z.object({ blobKey: z.string() }).optional(),
  occurredAt: z.string(),
  receivedAt: z.string(),
  ingestId: z.string(),
  /** The eventId of the newer vote of the same feedbackKey (informational: `CURRENT` is authoritative). */
  supersededBy: z.string().optional(),
});
export type StoredFeedbackEvent = z.output<typeof StoredFeedbackEvent>;

export const feedbackEventRecord = defineRecordCodec({
  kind: 'feedback event',
  schema: StoredFeedbackEvent,
  keys: (e) => {
    const sort = feedbackKeys.listSort(e.receivedAt, e.eventId);
    return {
      ...feedbackKeys.event(e.eventId),
      gsi1pk: feedbackKeys.byModel(e.model),
      gsi1sk: sort,
      gsi2pk: feedbackKeys.byDay(utcDay(e.receivedAt)),
      gsi2sk: sort,
    };
  },
});

/** One vote of a feedbackKey's history (every vote is kept). */
export const StoredVote = z.object({
  feedbackKey: z.string(),
  eventId: z.string(),
  occurredAt: z.string(),
  rating: Rating,
  kind: FeedbackKind,
  outcome: Outcome.optional(),
  ingestId: z.string(),
});
export type StoredVote = z.output<typeof StoredVote>;

export const voteRecord = defineRecordCodec({
  kind: 'feedback vote',
  schema: StoredVote,
  keys: (v) => feedbackKeys.vote(v.feedbackKey, feedbackKeys.voteOrder(v.occurredAt, v.eventId)),
  fromKeys: (k) => ({ feedbackKey: feedbackKeys.feedbackKeyOf(k.pk) }),
});

/** The current (newest) vote of a feedbackKey; written only over an older `order`. */
export const currentVoteRecord = defineRecordCodec({
  kind: 'current vote',
  schema: z.object({
    feedbackKey: z.string(),
    eventId: z.string(),
    /** `voteOrder(occurredAt, eventId)`: what a conditional write compares. */
    order: z.string(),
    occurredAt: z.string(),
  }),
  keys: (v) => feedbackKeys.current(v.feedbackKey),
  fromKeys: (k) => ({ feedbackKey: feedbackKeys.feedbackKeyOf(k.pk) }),
});

/** A report as stored: the ingested report and the request that stored it. */
export const StoredReport = z.object({
  reportId: z.string(),
  title: z.string(),
  body: z.string(),
  severity: ReportSeverity,
  reporter: z.string(),
  source: z.enum(['internal', 'automated']),
  links: z.array(z.string()),
  model: z.string(),
  traceId: z.string().optional(),
  tags: z.array(z.string()).optional(),
  trainingConsent: z.boolean().optional(),
  occurredAt: z.string().optional(),
  receivedAt: z.string(),
  ingestId: z.string(),
  repo: z.string().optional(),
  commit: z.string().optional(),
});
export type StoredReport = z.output<typeof StoredReport>;

export const reportRecord = defineRecordCodec({
  kind: 'report',
  schema: StoredReport,
  keys: (r) => {
    const sort = feedbackKeys.listSort(r.receivedAt, r.reportId);
    return {
      ...feedbackKeys.report(r.reportId),
      gsi1pk: feedbackKeys.reportsByModel(r.model),
      gsi1sk: sort,
      gsi2pk: feedbackKeys.reportsByDay(utcDay(r.receivedAt)),
      gsi2sk: sort,
    };
  },
});
