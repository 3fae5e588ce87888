/**
 * The feedback API's data: zod 4 schemas that validate requests AND produce the OpenAPI document
 * (`lib/api/openapi.ts`), so the two can never drift apart.
 *
 * Cross-field rules (an outcome needs `outcome`, a far-future `occurredAt`, …) live in
 * `validate-feedback-input.ts`, which runs them even when other fields fail, so a client sees every problem at once.
 */
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { boundedJson, FREE_JSON_MAX_DEPTH } from '../shared/json-bounds.ts';

extendZodWithOpenApi(z);

/** Limits, in bytes unless named otherwise. Exported so tests, docs and clients use the same numbers. */
export const FEEDBACK_LIMITS = {
  /** Events per `{ events: [...] }` batch. */
  batchMaxEvents: 500,
  /** UTF-8 bytes of `comment`. */
  commentMaxBytes: 8 * 1024,
  /** Bytes of `context` serialised as JSON. */
  contextMaxBytes: 16 * 1024,
  /** Bytes of an inline `trajectory.inline` serialised as JSON. */
  trajectoryInlineMaxBytes: 256 * 1024,
  /** How far ahead of the server clock `occurredAt` may be (client clock skew). */
  occurredAtMaxFutureMs: 15 * 60 * 1000,
  /** UTF-8 bytes of a report's `body`. */
  reportBodyMaxBytes: 64 * 1024,
  tagsMax: 32,
  linksMax: 32,
} as const;

/**
 * Where the trajectories clients upload (inline) are stored, in each tenant's blobs; a client's `trajectory.blobKey`
 * must name one of them (not the harness's `trajectories/attempts/`, nor anything else of the tenant).
 */
export const TRAJECTORY_KEY_PREFIX = 'trajectories/feedback/';

/**
 * Identifiers that end up inside record keys (`FEEDBACK#<eventId>`): no `#`, no whitespace, no control characters.
 * The charset is that of URL path segments plus `:` and `@`, so ids survive `GET /v1/feedback/{eventId}` unescaped.
 */
const ID_PATTERN = /^[A-Za-z0-9._:@+=\/-]+$/;
const idString = (max: number, description: string) =>
  z
    .string()
    .min(1)
    .max(max)
    .regex(ID_PATTERN, { message: 'may contain only letters, digits and . _ : @ + = / -' })
    .openapi({ description });

/** Fast UTF-8 byte length bound: a JS string of n UTF-16 units encodes to at most 3n bytes. */
export function utf8Bytes(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}
function fitsUtf8(s: string, max: number): boolean {
  return s.length * 3 <= max || utf8Bytes(s) <= max;
}
/** Whether a JSON value, once serialised, fits in `max` UTF-8 bytes. */
export function jsonFits(value: unknown, max: number): boolean {
  const s = JSON.stringify(value);
  return s === undefined || fitsUtf8(s, max);
}

const isoDateTime = z.iso
  .datetime({ offset: true })
  .openapi({ description: 'ISO 8601 date-time with Z or an offset, e.g. 2026-12-02T10:00:00Z', example: '2026-12-02T10:00:00Z' });

export const FeedbackKind = z.enum(['rating', 'comment', 'outcome']).openapi('FeedbackKind', {
  description:
    'rating: an explicit thumbs up/down; comment: free text; outcome: an implicit signal from what the user did with the change.',
});
export const Outcome = z.enum(['accepted', 'reverted', 'retried', 'corrected']).openapi('Outcome', {
  description: 'What the user did with the agent’s change; required when kind is outcome.',
});
export const Rating = z.enum(['up', 'down', 'none']).openapi('Rating');
export const FeedbackSource = z.enum(['user', 'internal', 'automated']).openapi('FeedbackSource');

const Tags = z
  .array(z.string().min(1).max(64))
  .max(FEEDBACK_LIMITS.tagsMax)
  .openapi({ description: `Up to ${FEEDBACK_LIMITS.tagsMax} labels of 1–64 characters.` });

/**
 * A trajectory given by reference or inline. Clients never choose where a trajectory is stored: an inline one is
 * stored by the server under a key it makes (`trajectories/feedback/<escaped eventId>.json` in the key's tenant), and
 * a `blobKey` may only name such a stored trajectory of the same tenant (checked at ingest: it must exist under
 * `trajectories/feedback/` in the tenant's blobs), e.g. the `trajectory.blobKey` an earlier event's record shows.
 */
export const TrajectoryRef = z
  .union([
    z.strictObject({
      blobKey: z
        .string()
        .min(1)
        .max(1024)
        .regex(/^(?!.*\.\.)[A-Za-z0-9._\/=:%-]+$/, { message: 'must be a blob key (letters, digits, . _ / = : % -, no "..")' })
        .refine((k) => k.startsWith(TRAJECTORY_KEY_PREFIX) && !k.slice(TRAJECTORY_KEY_PREFIX.length).includes('/') && k.endsWith('.json'), {
          message: `must name an uploaded trajectory (${TRAJECTORY_KEY_PREFIX}<id>.json)`,
        }),
    }),
    z.strictObject({
      inline: z
        .unknown()
        .refine((v) => v !== undefined, { message: 'inline trajectory is required' })
        .superRefine(boundedJson({ maxBytes: FEEDBACK_LIMITS.trajectoryInlineMaxBytes }))
        .openapi({ description: 'The trajectory JSON (e.g. ATIF); stored as a blob, the record keeps its key.' }),
    }),
  ])
  .openapi('TrajectoryRef', {
    description: `Either { blobKey } (a trajectory this tenant stored before) or { inline } (≤ ${FEEDBACK_LIMITS.trajectoryInlineMaxBytes} bytes of JSON, ≤ ${FREE_JSON_MAX_DEPTH} levels deep).`,
  });

/** The body of one feedback event, as a client sends it. */
export const FeedbackEventInput = z
  .strictObject({
    eventId: idString(128, 'Client-chosen idempotency key: a retried delivery with the same id is stored once.'),
    feedbackKey: z
      .string()
      .min(1)
      .max(600)
      .regex(/^[^\s#\u0000-\u001f]+$/, { message: 'must not contain whitespace, # or control characters' })
      .optional()
      .openapi({
        description:
          'Groups votes that replace each other; default `${traceId}:${turnId}:${reporter}`. The newest by occurredAt is current, earlier ones are kept as history.',
      }),
    kind: FeedbackKind,
    outcome: Outcome.optional(),
    traceId: idString(256, 'The agent trace the feedback is about.'),
    sessionId: idString(256, 'The user session.'),
    turnId: idString(256, 'The turn inside the trace.'),
    messageId: idString(256, 'The decision inside the trajectory this feedback concerns.').optional(),
    model: idString(256, 'Checkpoint id of the model that produced the turn.'),
    experiment: idString(256, 'Online experiment id, when the user was assigned to one.').optional(),
    arm: idString(256, 'Experiment arm the user was assigned to.').optional(),
    workspaceId: idString(256, 'The workspace of the user, when the product has them (the `workspace` unit of experiments).').optional(),
    rating: Rating.default('none'),
    comment: z
      .string()
      .refine((s) => fitsUtf8(s, FEEDBACK_LIMITS.commentMaxBytes), {
        message: `comment exceeds ${FEEDBACK_LIMITS.commentMaxBytes} bytes (UTF-8)`,
      })
      .optional()
      .openapi({ description: `Free text, ≤ ${FEEDBACK_LIMITS.commentMaxBytes} bytes UTF-8.` }),
    source: FeedbackSource,
    reporter: z.string().min(1).max(256).regex(/^[^#\u0000-\u001f]+$/, { message: 'must not contain # or control characters' }).openapi({
      description: 'Who gave the feedback (user id, service name).',
    }),
    tags: Tags.optional(),
    // Required, with no default: consent to train on a user's signal and trajectory must be an explicit decision of
    // the sending product, never something the platform assumes; a missing value is a client bug, not a "no".
    trainingConsent: z.boolean().openapi({ description: 'May this signal and its trajectory be used for training.' }),
    context: z
      .record(z.string(), z.unknown())
      .superRefine(boundedJson({ maxBytes: FEEDBACK_LIMITS.contextMaxBytes }))
      .optional()
      .openapi({ description: `Free JSON object (repo, tools, client version…), ≤ ${FEEDBACK_LIMITS.contextMaxBytes} bytes, ≤ ${FREE_JSON_MAX_DEPTH} levels deep.` }),
    trajectory: TrajectoryRef.optional(),
    occurredAt: isoDateTime,
  })
  .openapi('FeedbackEventInput');
export type FeedbackEventInput = z.input<typeof FeedbackEventInput>;
export type ParsedFeedbackEvent = z.output<typeof FeedbackEventInput>;

/** `POST /v1/feedback` with many events. Items are validated one by one so a bad item never costs its siblings. */
export const FeedbackBatchInput = z
  .strictObject({
    events: z.array(FeedbackEventInput).min(1).max(FEEDBACK_LIMITS.batchMaxEvents),
  })
  .openapi('FeedbackBatchInput');
/** The envelope check only: the items are validated separately. */
export const FeedbackBatchShape = z.strictObject({
  events: z.array(z.unknown()).min(1).max(FEEDBACK_LIMITS.batchMaxEvents),
});

/** A feedback event after ingestion: defaults filled, times normalised to UTC, trajectory always a blob key. */
export interface FeedbackEvent extends Omit<ParsedFeedbackEvent, 'trajectory' | 'feedbackKey'> {
  feedbackKey: string;
  trajectory?: { blobKey: string };
  /** Added by the server (UTC ISO 8601). */
  receivedAt: string;
}

export const FeedbackEventSchema = FeedbackEventInput.omit({ trajectory: true, feedbackKey: true })
  .extend({
    feedbackKey: z.string(),
    trajectory: z.object({ blobKey: z.string() }).optional(),
    receivedAt: isoDateTime,
  })
  .openapi('FeedbackEvent');

export const ReportSeverity = z.enum(['low', 'medium', 'high', 'critical']).openapi('ReportSeverity');

/** `POST /v1/reports`: an internal manual report or an automated one. */
export const ReportInput = z
  .strictObject({
    reportId: idString(128, 'Client-chosen idempotency key.'),
    title: z.string().min(1).max(300),
    body: z
      .string()
      .min(1)
      .refine((s) => fitsUtf8(s, FEEDBACK_LIMITS.reportBodyMaxBytes), {
        message: `body exceeds ${FEEDBACK_LIMITS.reportBodyMaxBytes} bytes (UTF-8)`,
      }),
    severity: ReportSeverity,
    reporter: z.string().min(1).max(256).regex(/^[^#\u0000-\u001f]+$/, { message: 'must not contain # or control characters' }),
    source: z.enum(['internal', 'automated']),
    links: z.array(z.url({ protocol: /^https?$/ })).max(FEEDBACK_LIMITS.linksMax).default([]),
    model: idString(256, 'Checkpoint id the report is about.'),
    traceId: idString(256, 'A trace that shows the problem.').optional(),
    tags: Tags.optional(),
    trainingConsent: z.boolean().optional(),
    occurredAt: isoDateTime.optional(),
    /**
     * The git repository the report is about (an eval case drafted from it starts there): a remote one only —
     * `https://host/…`, `ssh://host/…` or `git@host:path`. Never a path on the server (`file://`, `/srv/…`), which a
     * reporter could otherwise make an approved task's repository.
     */
    repo: z
      .string()
      .min(1)
      .max(2048)
      .regex(/^(https:\/\/[^\s/@]+[^\s]*|ssh:\/\/[^\s/]+\/[^\s]+|git@[A-Za-z0-9.-]+:[^\s/][^\s]*)$/, { message: 'must be a remote git URL: https://host/path, ssh://host/path or git@host:path' })
      .optional(),
    /** The commit of `repo` the report is about: a hexadecimal object id (7–64 digits); needs `repo`. */
    commit: z
      .string()
      .regex(/^[0-9a-f]{7,64}$/, { message: 'must be a hexadecimal commit id of 7 to 64 digits' })
      .optional(),
  })
  .superRefine((r, ctx) => {
    if (r.commit !== undefined && r.repo === undefined) ctx.addIssue({ code: 'custom', path: ['repo'], message: 'is required when commit is given' });
  })
  .openapi('ReportInput');
export type ReportInput = z.input<typeof ReportInput>;
export type ParsedReport = z.output<typeof ReportInput>;
export interface Report extends ParsedReport {
  receivedAt: string;
}

/** One item's verdict in an ingest answer. */
export const ItemResult = z
  .object({
    index: z.int().nonnegative(),
    eventId: z.string().optional(),
    status: z.enum(['accepted', 'duplicate', 'rejected']),
    issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .openapi('ItemResult');
export type ItemResult = z.infer<typeof ItemResult>;

export const IngestResult = z
  .object({
    ingestId: z.string(),
    accepted: z.int(),
    duplicates: z.int(),
    rejected: z.int(),
    results: z.array(ItemResult),
  })
  .openapi('IngestResult', { description: '202 when at least one item was accepted; 400 when every item was rejected.' });
export type IngestResult = z.infer<typeof IngestResult>;

export const ReportAccepted = z
  .object({ ingestId: z.string(), reportId: z.string(), status: z.literal('accepted') })
  .openapi('ReportAccepted');

/** A stored event as `GET /v1/feedback/{eventId}` returns it. */
export const FeedbackRecordView = FeedbackEventSchema.extend({
  ingestId: z.string(),
  current: z.boolean().openapi({ description: 'Whether this is the current (newest) vote of its feedbackKey.' }),
  supersededBy: z.string().optional(),
  history: z
    .array(z.object({ eventId: z.string(), occurredAt: z.string(), rating: Rating, kind: FeedbackKind, current: z.boolean() }))
    .optional()
    .openapi({ description: 'Every vote under the same feedbackKey, newest first.' }),
}).openapi('FeedbackRecord');
export type FeedbackRecordView = z.infer<typeof FeedbackRecordView>;

export const EventIdParams = z.object({ eventId: idString(128, 'The event id.').openapi({ param: { name: 'eventId', in: 'path' } }) });

/** `GET /v1/feedback` query string. */
export const ListFeedbackQuery = z
  .strictObject({
    model: idString(256, 'List one checkpoint’s feedback (by-model index); without it, list by day.').optional(),
    rating: Rating.optional(),
    source: FeedbackSource.optional(),
    since: isoDateTime.optional().openapi({ description: 'Inclusive lower bound on receivedAt; default 7 days before until.' }),
    until: isoDateTime.optional().openapi({ description: 'Inclusive upper bound on receivedAt; default now.' }),
    cursor: z.string().min(1).max(2048).optional().openapi({ description: 'Opaque cursor from the previous page.' }),
    limit: z.coerce.number().int().min(1).max(500).default(50),
  })
  .openapi('ListFeedbackQuery');
export type ListFeedbackQuery = z.output<typeof ListFeedbackQuery>;

export const FeedbackPage = z
  .object({ items: z.array(FeedbackRecordView.omit({ history: true })), cursor: z.string().optional() })
  .openapi('FeedbackPage');
