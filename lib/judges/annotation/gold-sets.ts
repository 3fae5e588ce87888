/**
 * Gold sets: per judge, the subjects people label so the judge can be calibrated against them. A gold set names the
 * judge it calibrates and the label ids every item asks for; its items sit in the queue `gold:<name>`, and a
 * deterministic share of them (by hash of the subject, default 20%) is the two-person slice that gives the human
 * ceiling. Its done items are the gold items calibration reads.
 */
import { z } from 'zod';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import { toFieldIssues } from '../../shared/field-issues.ts';
import { JUDGE_NAME_PATTERN } from '../judge-identity.ts';
import { SubjectSchema, type GoldItem } from '../schemas.ts';
import { inFraction, LabelIdSchema, subjectKey, subjectKindOfLabel, type AnnotationItem, type GoldSet } from './annotation-item.ts';
import { enqueueAnnotation, listAllAnnotations } from './annotation-queue.ts';
import { goldSetRecord } from './record-codecs.ts';
import { annotationKeys, goldSetQueue } from './record-keys.ts';

/** The share of a gold set two people label, by default. */
export const DEFAULT_TWO_PERSON_FRACTION = 0.2;

export const GoldSetRequest = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'lower-case letters, digits, . _ - (at most 64)'),
  /** The judge name it calibrates. */
  judge: z.string().regex(JUDGE_NAME_PATTERN, 'a judge name'),
  /** The label ids each item asks for: criterion ids, `preference`, or `mode:<id>`s (one subject kind). */
  labels: z.array(LabelIdSchema).min(1).max(64),
  twoPersonFraction: z.number().min(0).max(1).default(DEFAULT_TWO_PERSON_FRACTION),
  description: z.string().max(2000).optional(),
  /** Subjects to add at once (each is queued). */
  subjects: z.array(SubjectSchema).max(1000).optional(),
});
export type GoldSetRequest = z.input<typeof GoldSetRequest>;

/**
 * Creates a gold set (and queues the subjects given).
 *
 * @example
 * await createGoldSet(ports, { name: 'fm-gold', judge: 'fm-judge', labels: ['mode:scope-calibration', 'mode:ignored-instruction'] });
 * @throws ValidationError naming the field (label ids of two subject kinds); ConflictError when the name is taken.
 */
export async function createGoldSet(ports: Pick<Ports, 'records' | 'blobs' | 'now'>, request: unknown): Promise<{ goldSet: GoldSet; added: number }> {
  const parsed = GoldSetRequest.safeParse(request);
  if (!parsed.success) throw new ValidationError('Invalid gold set', toFieldIssues(parsed.error.issues));
  const { subjects, ...body } = parsed.data;
  const kinds = [...new Set(body.labels.map(subjectKindOfLabel))];
  if (kinds.length > 1) {
    throw new ValidationError('A gold set labels one kind of subject', [{ path: 'labels', message: `mixes labels of ${kinds.join(' and ')} subjects` }]);
  }
  const goldSet: GoldSet = {
    ...body,
    labels: [...new Set(body.labels)],
    subjectKind: kinds[0]!,
    createdAt: ports.now().toISOString(),
  };
  const { written } = await ports.records.put(goldSetRecord.encode(goldSet), { condition: { kind: 'absent' } });
  if (!written) throw new ConflictError(`Gold set ${goldSet.name} exists`);
  const added = subjects ? (await addToGoldSet(ports, goldSet.name, { subjects })).added : 0;
  return { goldSet, added };
}

/**
 * @example
 * const set = await getGoldSet(ports, 'fm-gold'); // { name, judge, labels, subjectKind, twoPersonFraction, … }
 * @throws NotFoundError for an unknown gold set.
 */
export async function getGoldSet(ports: Pick<Ports, 'records'>, name: string): Promise<GoldSet> {
  const key = annotationKeys.goldSet(name);
  const set = goldSetRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
  if (!set) throw new NotFoundError(`No gold set ${name}`);
  return set;
}

/**
 * Every gold set, by name.
 *
 * @example
 * const sets = await listGoldSets(ports);
 */
export async function listGoldSets(ports: Pick<Ports, 'records'>): Promise<GoldSet[]> {
  const out: GoldSet[] = [];
  let cursor: string | undefined;
  do {
    const page = await ports.records.query({ index: 'gsi1', partition: annotationKeys.goldSets, limit: 1000, ...(cursor ? { cursor } : {}) });
    out.push(...page.items.map((i) => goldSetRecord.decode(i)));
    cursor = page.cursor;
  } while (cursor);
  return out;
}

export const AddToGoldSetRequest = z.strictObject({ subjects: z.array(SubjectSchema).min(1).max(1000) });

/**
 * Adds subjects to a gold set: each is queued (`gold-set`, or `two-person-slice` for the share two people label).
 *
 * @example
 * await addToGoldSet(ports, 'fm-gold', { subjects: [{ kind: 'signal', signalKey: 'feedback:e1' }] }); // { added: 1, items }
 * @throws ValidationError naming `subjects[i]` for a subject of another kind; NotFoundError for an unknown gold set.
 */
export async function addToGoldSet(ports: Pick<Ports, 'records' | 'blobs' | 'now'>, name: string, request: unknown): Promise<{ added: number; items: AnnotationItem[] }> {
  const parsed = AddToGoldSetRequest.safeParse(request);
  if (!parsed.success) throw new ValidationError('Invalid subjects', toFieldIssues(parsed.error.issues));
  const set = await getGoldSet(ports, name);
  const wrong = parsed.data.subjects.flatMap((s, i) => (s.kind === set.subjectKind ? [] : [{ path: `subjects[${i}]`, message: `gold set ${name} labels ${set.subjectKind}s, not ${s.kind}s` }]));
  if (wrong.length > 0) throw new ValidationError('Subjects of another kind', wrong);
  const queue = goldSetQueue(name);
  let added = 0;
  const items: AnnotationItem[] = [];
  for (const subject of parsed.data.subjects) {
    const slice = inFraction(`${name}\n${subjectKey(subject)}`, set.twoPersonFraction);
    const { item, created } = await enqueueAnnotation(
      ports,
      { subject, reason: slice ? 'two-person-slice' : 'gold-set', queue, labels: set.labels },
      { goldSet: name, needs: slice ? 2 : 1 },
    );
    if (created) added++;
    items.push(item);
  }
  return { added, items };
}

/**
 * A gold set's labelled items in the gold-item shape calibration reads (`labels`, and `secondLabels` on the
 * two-person slice), oldest first. Only items added by `addToGoldSet` (`item.goldSet` is the set) count.
 *
 * @example
 * const gold = await readGoldItems(ports, 'fm-gold'); // GoldItem[]
 */
export async function readGoldItems(ports: Pick<Ports, 'records'>, name: string): Promise<GoldItem[]> {
  await getGoldSet(ports, name);
  const done = await listAllAnnotations(ports, { queue: goldSetQueue(name), status: 'done' });
  // Only items the gold set added (an item in its queue without `goldSet` was never added by `addToGoldSet`).
  return done.filter((item) => item.goldSet === name).reverse().map(goldItemOf);
}

/** A done item as a gold item. */
export function goldItemOf(item: AnnotationItem): GoldItem {
  return {
    id: item.id,
    subject: item.subject,
    labels: item.labels ?? {},
    ...(item.secondLabels ? { secondLabels: item.secondLabels } : {}),
    annotators: [item.annotator, item.secondAnnotator].filter((a): a is string => a !== undefined),
    ...(item.length !== undefined ? { length: item.length } : {}),
  };
}

/**
 * What `GET /v1/gold-sets/{name}` answers: the set and its counts.
 *
 * @example
 * await showGoldSet(ports, 'fm-gold'); // { goldSet, pending: 3, done: 40, twoPerson: 9 }
 */
export async function showGoldSet(ports: Pick<Ports, 'records'>, name: string): Promise<{ goldSet: GoldSet; pending: number; done: number; twoPerson: number }> {
  const goldSet = await getGoldSet(ports, name);
  const queue = goldSetQueue(name);
  const [pending, done] = await Promise.all([listAllAnnotations(ports, { queue, status: 'pending' }), listAllAnnotations(ports, { queue, status: 'done' })]);
  const twoPerson = [...pending, ...done].filter((i) => i.needs === 2).length;
  return { goldSet, pending: pending.length, done: done.length, twoPerson };
}

export const GoldSetSubjectRequest = z.strictObject({ goldSet: z.string().min(1).max(64), subject: SubjectSchema });

/**
 * `POST /v1/annotations`: a subject into a gold set's queue (`{ goldSet, subject }`: the gold set says what to label
 * and the reason), or into any queue (`{ subject, reason, queue?, labels? }`).
 *
 * @example
 * await postAnnotation(ports, { goldSet: 'fm-gold', subject: { kind: 'signal', signalKey: 'feedback:e1' } });
 */
export async function postAnnotation(ports: Pick<Ports, 'records' | 'blobs' | 'now'>, body: unknown): Promise<{ item: AnnotationItem; created: boolean }> {
  if (body !== null && typeof body === 'object' && 'goldSet' in body) {
    const parsed = GoldSetSubjectRequest.safeParse(body);
    if (!parsed.success) throw new ValidationError('Invalid annotation item', toFieldIssues(parsed.error.issues));
    const { added, items } = await addToGoldSet(ports, parsed.data.goldSet, { subjects: [parsed.data.subject] });
    return { item: items[0]!, created: added === 1 };
  }
  return enqueueAnnotation(ports, body);
}
