/**
 * Annotation queues: items that ask people to label a subject (an attempt's rubric criteria, a signal's failure
 * modes, the better of two attempts), each queued for a reason (a gold set, its two-person slice, a sample of a
 * judge's production verdicts, a judge–user disagreement). An item is done when it has what it needs: one person's
 * labels, or two different people's on the two-person slice (`labels` and `secondLabels`). Nobody labels an item
 * twice; a label outside what the item asks for is refused naming it (`labels.c2`).
 */
import { z } from 'zod';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import type { FieldIssue } from '../../shared/field-issues.ts';
import { toFieldIssues } from '../../shared/field-issues.ts';
import { forEachLimited } from '../../shared/for-each-limited.ts';
import { SubjectSchema, type Subject } from '../schemas.ts';
import {
  annotationItemId,
  AnnotationReasonSchema,
  LabelIdSchema,
  labelValues,
  MODE_LABEL_PREFIX,
  QueueNameSchema,
  subjectKey,
  subjectKindOfLabel,
  type AnnotationItem,
  type AnnotationReason,
  type JudgeVerdictNote,
} from './annotation-item.ts';
import { annotationIndexRecord, annotationItemRecord } from './record-codecs.ts';
import { ANNOTATION_STATUSES, annotationKeys, listingOf, listingsOf, type AnnotationStatus } from './record-keys.ts';
import { attemptLookup, defaultLabelIds, subjectLength } from './subject-facts.ts';

/** The body of `POST /v1/annotations` (without a gold set: `lib/judges/annotation/gold-sets.ts` adds to one). */
export const EnqueueRequest = z.strictObject({
  subject: SubjectSchema,
  reason: AnnotationReasonSchema,
  /** Default: `reason` itself (`production-sample`, …). */
  queue: QueueNameSchema.optional(),
  /** The label ids asked for; default: the attempt's task rubric, every mode of the taxonomy, or `preference`. */
  labels: z.array(LabelIdSchema).min(1).max(64).optional(),
});
export type EnqueueRequest = z.input<typeof EnqueueRequest>;

export interface EnqueueOptions {
  goldSet?: string;
  /** 2: two different people label it (the two-person slice). Default 1. */
  needs?: 1 | 2;
  /** The production verdict a drift item compares with. */
  judge?: JudgeVerdictNote;
}

/**
 * Queues a subject for people to label; the same subject in the same queue is one item (`created: false` then).
 *
 * @example
 * const { item } = await enqueueAnnotation(ports, { subject: { kind: 'signal', signalKey: 'feedback:e1' }, reason: 'production-sample' });
 * @throws ValidationError naming the field (a label id of another subject kind, no criteria to ask for; `queue` for a
 *   queue under a reserved prefix — `gold:` and `drift:` queues are filled only by `addToGoldSet` and the drift watch).
 */
export async function enqueueAnnotation(
  ports: Pick<Ports, 'records' | 'blobs' | 'now'>,
  request: unknown,
  options: EnqueueOptions = {},
): Promise<{ item: AnnotationItem; created: boolean }> {
  const parsed = EnqueueRequest.safeParse(request);
  if (!parsed.success) throw new ValidationError('Invalid annotation item', toFieldIssues(parsed.error.issues));
  const { subject, reason } = parsed.data;
  const queue = parsed.data.queue ?? reason;
  checkReservedQueue(queue, options);
  const lookup = attemptLookup(ports.records);
  const asks = parsed.data.labels ?? (await defaultLabelIds(ports, subject, lookup));
  if (!asks) {
    throw new ValidationError('Name the labels to ask for', [{ path: 'labels', message: `the task rubric of ${subjectKey(subject)} could not be read: give the criteria ids` }]);
  }
  checkLabelIdsFit(subject, asks);
  const id = annotationItemId(queue, subject);
  const existing = annotationItemRecord.decodeIfPresent(await ports.records.get(annotationKeys.item(id).pk, annotationKeys.item(id).sk));
  if (existing) return { item: existing, created: false };
  const length = await subjectLength(ports, subject, lookup).catch(() => undefined);
  const item: AnnotationItem = {
    id,
    queue,
    reason,
    subject,
    subjectKey: subjectKey(subject),
    asks: [...new Set(asks)],
    needs: options.needs ?? 1,
    ...(options.goldSet !== undefined ? { goldSet: options.goldSet } : {}),
    status: 'pending',
    createdAt: ports.now().toISOString(),
    revision: 0,
    ...(length !== undefined ? { length } : {}),
    ...(options.judge ? { judge: options.judge } : {}),
  };
  // Index rows first: an item without its rows would be invisible; a row whose item is absent is skipped on read.
  await ports.records.putMany(indexRows(item, item.status));
  const { written } = await ports.records.put(annotationItemRecord.encode(item), { condition: { kind: 'absent' } });
  if (!written) {
    // Another writer queued it first: its rows stand, ours (another creation time) go.
    const stored = await getAnnotation(ports, id);
    if (stored.createdAt !== item.createdAt) await Promise.all(indexRows(item, 'pending').map((row) => ports.records.delete(row.pk, row.sk)));
    return { item: stored, created: false };
  }
  return { item, created: true };
}

/** Queue prefixes only the gold sets and the drift watch write under: a posted item there would pose as gold. */
export const RESERVED_QUEUE_PREFIXES = ['gold:', 'drift:'] as const;

/**
 * Throws naming `queue` for a reserved queue, unless the caller is the one that owns it: `gold:<set>` with
 * `options.goldSet` = `<set>` (`addToGoldSet`), `drift:<judge>` with `options.judge` of that judge (the drift watch).
 */
function checkReservedQueue(queue: string, options: EnqueueOptions): void {
  const prefix = RESERVED_QUEUE_PREFIXES.find((p) => queue.startsWith(p));
  if (prefix === undefined) return;
  const owner = queue.slice(prefix.length);
  const owned = prefix === 'gold:' ? options.goldSet === owner : options.judge?.ref.name === owner;
  if (!owned) {
    throw new ValidationError(`Queue ${queue} is reserved: ${prefix === 'gold:' ? 'add to a gold set with { goldSet, subject }' : 'the drift watch fills it'}`, [
      { path: 'queue', message: `the ${prefix} prefix is reserved` },
    ]);
  }
}

/** Throws naming `labels` when a label id belongs to another subject kind (a `preference` asked of a signal). */
function checkLabelIdsFit(subject: Subject, asks: readonly string[]): void {
  const issues: FieldIssue[] = [];
  asks.forEach((id, i) => {
    const kind = subjectKindOfLabel(id);
    if (kind !== subject.kind) issues.push({ path: `labels[${i}]`, message: `${id} is a label of a ${kind}, not of a ${subject.kind}` });
  });
  if (issues.length > 0) throw new ValidationError('Labels that do not fit the subject', issues);
}

function indexRows(item: AnnotationItem, status: AnnotationStatus) {
  return listingsOf(item.queue, item.reason).map((listing) => annotationIndexRecord.encode({ id: item.id, listing, status, createdAt: item.createdAt }));
}

/**
 * @example
 * const item = await getAnnotation(ports, '3fa9…');
 * @throws NotFoundError for an unknown id.
 */
export async function getAnnotation(ports: Pick<Ports, 'records'>, id: string): Promise<AnnotationItem> {
  const key = annotationKeys.item(id);
  const item = annotationItemRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
  if (!item) throw new NotFoundError(`No annotation item ${id}`);
  return item;
}

export const AnnotationsQuery = z.strictObject({
  queue: QueueNameSchema.optional(),
  reason: AnnotationReasonSchema.optional(),
  status: z.enum(ANNOTATION_STATUSES).default('pending'),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().min(1).max(2048).optional(),
});
export type AnnotationsQuery = z.input<typeof AnnotationsQuery>;

/**
 * One page of a queue, newest first: by queue, by reason, both or neither, pending or done. Each filter is a
 * listing of its own (one query; nothing filtered in memory).
 *
 * @example
 * const { items, cursor } = await listAnnotations(ports, { queue: 'gold:fm-gold', status: 'pending', limit: 20 });
 */
export async function listAnnotations(ports: Pick<Ports, 'records'>, query: unknown): Promise<{ items: AnnotationItem[]; cursor?: string }> {
  const q = AnnotationsQuery.safeParse(query ?? {});
  if (!q.success) throw new ValidationError('Invalid query', toFieldIssues(q.error.issues));
  const { queue, reason, status, limit, cursor } = q.data;
  const page = await ports.records.query({
    partition: annotationKeys.listing(listingOf(queue, reason), status),
    limit,
    descending: true,
    ...(cursor ? { cursor } : {}),
  });
  const rows = page.items.map((i) => annotationIndexRecord.decode(i));
  const found: Array<AnnotationItem | undefined> = new Array(rows.length);
  await forEachLimited(rows, 16, async (row, i) => {
    const key = annotationKeys.item(row.id);
    found[i] = annotationItemRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
  });
  // A row left behind (a move to done that did not finish, a lost race to queue the same subject) points at an item
  // of the other status or another creation time: it is not listed.
  const items = found.filter((i, n): i is AnnotationItem => i !== undefined && i.status === status && i.createdAt === rows[n]!.createdAt);
  return { items, ...(page.cursor ? { cursor: page.cursor } : {}) };
}

/**
 * Every item of a listing (all pages), newest first.
 *
 * @example
 * const done = await listAllAnnotations(ports, { queue: 'gold:fm-gold', status: 'done' });
 */
export async function listAllAnnotations(ports: Pick<Ports, 'records'>, query: { queue?: string; reason?: AnnotationReason; status: AnnotationStatus }): Promise<AnnotationItem[]> {
  const out: AnnotationItem[] = [];
  let cursor: string | undefined;
  do {
    const page = await listAnnotations(ports, { ...query, limit: 500, ...(cursor ? { cursor } : {}) });
    out.push(...page.items);
    cursor = page.cursor;
  } while (cursor);
  return out;
}

export const LabelRequest = z.strictObject({
  /** Who labels (user id, e-mail). */
  annotator: z.string().min(1).max(256),
  /** Label id → value (`c1: 'pass'`, `preference: 'a'`, `mode:scope-calibration: 'yes'`). Modes left out are `no`. */
  labels: z.record(z.string().max(80), z.string().max(40)),
});
export type LabelRequest = z.input<typeof LabelRequest>;

/**
 * A person labels an item. On a signal item the modes not named are `no` (a person names the modes they see); every
 * other label id asked for is required. The second label of a two-person item must come from someone else.
 *
 * @example
 * const item = await labelAnnotation(ports, id, { annotator: 'ana@example.com', labels: { c1: 'pass', c2: 'fail' } });
 * item.status; // 'done'
 * @throws ValidationError naming `labels.<id>`; ConflictError when the person labelled it already or it is done;
 *   NotFoundError for an unknown id.
 */
export async function labelAnnotation(ports: Pick<Ports, 'records' | 'now'>, id: string, request: unknown): Promise<AnnotationItem> {
  const parsed = LabelRequest.safeParse(request);
  if (!parsed.success) throw new ValidationError('Invalid labels', toFieldIssues(parsed.error.issues));
  const { annotator } = parsed.data;
  for (let attempt = 0; ; attempt++) {
    const item = await getAnnotation(ports, id);
    const labels = checkLabels(item, parsed.data.labels);
    if (item.status === 'done') throw new ConflictError(`Annotation item ${id} is done already`);
    if (item.annotator === annotator) throw new ConflictError(`${annotator} has labelled annotation item ${id} already; a second label must come from someone else`);
    const at = ports.now().toISOString();
    const first = item.labels === undefined;
    const next: AnnotationItem = first
      ? { ...item, labels, annotator, labelledAt: at, revision: item.revision + 1 }
      : { ...item, secondLabels: labels, secondAnnotator: annotator, secondLabelledAt: at, revision: item.revision + 1 };
    const done = first ? item.needs === 1 : true;
    if (done) {
      next.status = 'done';
      next.doneAt = at;
      await ports.records.putMany(indexRows(next, 'done'));
    }
    const { written } = await ports.records.put(annotationItemRecord.encode(next), { condition: { kind: 'unchanged', field: 'revision', value: item.revision } });
    if (written) {
      if (done) await Promise.all(indexRows(item, 'pending').map((row) => ports.records.delete(row.pk, row.sk)));
      return next;
    }
    // Someone labelled it meanwhile: read it again and decide again (it may be done now, or theirs).
    if (attempt >= 3) throw new ConflictError(`Annotation item ${id} kept changing while it was labelled; try again`);
  }
}

/** The labels checked against what the item asks: every issue named `labels.<id>`. */
function checkLabels(item: AnnotationItem, given: Record<string, string>): Record<string, string> {
  const issues: FieldIssue[] = [];
  const asked = new Set(item.asks);
  for (const [id, value] of Object.entries(given)) {
    if (!asked.has(id)) {
      issues.push({ path: `labels.${id}`, message: `not asked for: this item asks for ${item.asks.join(', ')}` });
      continue;
    }
    const values = labelValues(id);
    if (!values.includes(value)) issues.push({ path: `labels.${id}`, message: `must be one of ${values.join(', ')} (got ${JSON.stringify(value)})` });
  }
  const labels: Record<string, string> = {};
  for (const id of item.asks) {
    const value = given[id];
    if (value !== undefined) labels[id] = value;
    else if (id.startsWith(MODE_LABEL_PREFIX)) labels[id] = 'no';
    else issues.push({ path: `labels.${id}`, message: `required: one of ${labelValues(id).join(', ')}` });
  }
  if (issues.length > 0) throw new ValidationError(`Invalid labels for annotation item ${item.id}`, issues);
  return labels;
}
