/**
 * Notices: what Flywheel tells people, kept as records so they can be listed, acknowledged and answered. A notice
 * says one thing once: a failure with its cause and the link to act, a stalled run, a decision someone has to take
 * (with the actions that take it), a budget crossed. Repeats of the same `dedupKey` fold into one notice
 * (`occurrences`), delivery waits out quiet hours unless the notice is an alert, and a decision notice stays `open`
 * until someone answers one of its actions (in Slack, in the console, or through the operation's own route).
 *
 * zod 4 schemas that validate requests AND write the OpenAPI document, and type the records.
 */
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

extendZodWithOpenApi(z);

export const NOTICE_LIMITS = {
  titleMaxChars: 150,
  textMaxChars: 3000,
  fieldsMax: 10,
  actionsMax: 5,
  /** Notices per `GET /v1/notices` page. */
  pageMax: 200,
} as const;

export const NoticeSeverity = z.enum(['info', 'warning', 'alert']).openapi('NoticeSeverity');
export type NoticeSeverity = z.infer<typeof NoticeSeverity>;

/** What a notice is about: a failure (reported once), a stall (no progress in the stage's window), a decision to take, a budget crossed, or plain information. */
export const NoticeKind = z.enum(['failure', 'stall', 'decision', 'budget', 'info']).openapi('NoticeKind');
export type NoticeKind = z.infer<typeof NoticeKind>;

/** `open` until acknowledged (a person saw it) or resolved (a decision was taken, or the condition cleared). */
export const NoticeStatus = z.enum(['open', 'acknowledged', 'resolved']).openapi('NoticeStatus');
export type NoticeStatus = z.infer<typeof NoticeStatus>;

const id = z.string().min(1).max(256);

/**
 * The decisions a notice can ask for. Each names an existing operation, so answering from Slack or the console does
 * exactly what the route would (`lib/people/decisions/perform-decision.ts`).
 */
export const DecisionOperation = z
  .discriminatedUnion('kind', [
    z.object({ kind: z.literal('approve-eval-draft'), draftId: id }),
    z.object({ kind: z.literal('start-experiment'), experimentId: id }),
    z.object({ kind: z.literal('decide-experiment'), experimentId: id, decision: z.enum(['ship', 'rollback', 'extend']) }),
    z.object({ kind: z.literal('retire-suite'), suiteId: id }),
    z.object({ kind: z.literal('resume-training-run'), runId: id }),
    z.object({ kind: z.literal('stop-training-run'), runId: id }),
  ])
  .openapi('DecisionOperation');
export type DecisionOperation = z.infer<typeof DecisionOperation>;

/** One button of a decision notice. */
export const NoticeAction = z
  .object({
    /** Unique within the notice, e.g. `ship`. */
    id: z.string().regex(/^[a-z0-9-]{1,32}$/),
    label: z.string().min(1).max(75),
    style: z.enum(['primary', 'danger']).optional(),
    operation: DecisionOperation,
  })
  .openapi('NoticeAction');
export type NoticeAction = z.infer<typeof NoticeAction>;

/** What a capability passes to `raiseNotice` (`lib/people/notices/raise-notice.ts`). */
export const RaiseNoticeInput = z.object({
  /** Repeats with the same key fold into one notice, e.g. `sweep.failed:sw-1` or `training.stalled:run-7`. */
  dedupKey: z.string().min(1).max(256),
  kind: NoticeKind,
  severity: NoticeSeverity,
  title: z.string().min(1).max(NOTICE_LIMITS.titleMaxChars),
  /** Detail, Slack mrkdwn / plain text: the cause, for a failure. */
  text: z.string().max(NOTICE_LIMITS.textMaxChars),
  /** The capability and run it is about, e.g. `{ capability: 'training', runKind: 'training-run', runId: 'run-7' }`. */
  source: z.object({ capability: z.string().min(1).max(64), runKind: z.string().max(64).optional(), runId: z.string().max(256).optional() }),
  /** The console path where a person acts, e.g. `/training/run-7` (the console's hash route; made absolute with the console URL). */
  link: z.string().max(512).optional(),
  fields: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
  actions: z.array(NoticeAction).max(NOTICE_LIMITS.actionsMax).optional(),
});
export type RaiseNoticeInput = z.infer<typeof RaiseNoticeInput>;

export const NoticeRecord = RaiseNoticeInput.extend({
  /** Time-sortable: `n-<createdAt ms, base36, 9 chars>-<8 hex of the dedup key's hash>`. */
  noticeId: z.string(),
  status: NoticeStatus,
  createdAt: z.iso.datetime(),
  lastSeenAt: z.iso.datetime(),
  /** How many times it was raised (repeats fold in). */
  occurrences: z.number().int().min(1),
  acknowledgedBy: z.string().optional(),
  acknowledgedAt: z.iso.datetime().optional(),
  /** The action taken (or the condition that cleared it). */
  resolution: z
    .object({ actionId: z.string().optional(), by: z.string(), at: z.iso.datetime(), outcome: z.string().max(1000) })
    .optional(),
  /** Where it went: the log always; Slack and the alarm topic when configured; `deferredUntil` during quiet hours. */
  delivery: z.object({
    slack: z.enum(['sent', 'failed', 'not-configured', 'deferred', 'deduplicated']),
    topic: z.enum(['sent', 'failed', 'not-configured', 'deferred', 'deduplicated']),
    deferredUntil: z.iso.datetime().optional(),
    /** The Slack message (`chat.postMessage`), so an answer can update it in place. */
    slackMessage: z.object({ channel: z.string(), ts: z.string() }).optional(),
  }),
}).openapi('Notice');
export type NoticeRecord = z.infer<typeof NoticeRecord>;

export const ListNoticesQuery = z.object({
  status: NoticeStatus.optional(),
  kind: NoticeKind.optional(),
  severity: NoticeSeverity.optional(),
  limit: z.coerce.number().int().min(1).max(NOTICE_LIMITS.pageMax).optional(),
  cursor: z.string().max(1024).optional(),
});
export type ListNoticesQuery = z.infer<typeof ListNoticesQuery>;

export const NoticePage = z.object({ notices: z.array(NoticeRecord), nextCursor: z.string().optional() }).openapi('NoticePage');
export type NoticePage = z.infer<typeof NoticePage>;

export const AcknowledgeNoticeBody = z.object({
  /** Who saw it (free text, e.g. a name or an e-mail); the key's id is used when absent. */
  by: z.string().min(1).max(128).optional(),
});
