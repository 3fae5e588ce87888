/**
 * What a person is asked to label, and the vocabulary of each label id: a criterion id takes `pass` / `fail` /
 * `not-applicable`, `preference` (a pair) takes `a` / `b` / `tie`, and `mode:<id>` (a signal) takes `yes` / `no` —
 * the vocabulary of a gold item (`lib/judges/schemas.ts`). The schemas are the types.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { JudgeRefSchema } from '../judge-identity.ts';
import { CRITERION_VERDICTS, SubjectSchema, type Subject } from '../schemas.ts';
import { ANNOTATION_STATUSES } from './record-keys.ts';

/**
 * Why an item is queued: it belongs to a gold set, it is in a gold set's slice that two people label (the human
 * ceiling), it is a sample of a judge's production verdicts, or the judge and the user disagreed on it.
 */
export const ANNOTATION_REASONS = ['gold-set', 'two-person-slice', 'production-sample', 'disagreement'] as const;
export const AnnotationReasonSchema = z.enum(ANNOTATION_REASONS);
export type AnnotationReason = z.infer<typeof AnnotationReasonSchema>;

export const PREFERENCE_LABEL = 'preference';
export const MODE_LABEL_PREFIX = 'mode:';
export const PREFERENCE_VALUES = ['a', 'b', 'tie'] as const;
export const MODE_VALUES = ['yes', 'no'] as const;

/** A label id: a criterion id, `preference`, or `mode:<mode id>`. */
export const LabelIdSchema = z.string().regex(/^(?:preference|mode:[a-z0-9][a-z0-9_-]{0,63}|[a-z0-9][a-z0-9_-]{0,63})$/, 'a criterion id, `preference` or `mode:<id>`');
/** A queue name: `gold:<gold set>`, `drift:<judge>`, or one of your own. */
export const QueueNameSchema = z.string().regex(/^[a-z0-9][a-z0-9:._-]{0,127}$/, 'lower-case letters, digits and : . _ - (at most 128)');

/** The values a label id takes. */
export function labelValues(id: string): readonly string[] {
  if (id === PREFERENCE_LABEL) return PREFERENCE_VALUES;
  if (id.startsWith(MODE_LABEL_PREFIX)) return MODE_VALUES;
  return CRITERION_VERDICTS;
}

/** Which subject kind a label id belongs to: `preference` a pair, `mode:*` a signal, a criterion an attempt. */
export function subjectKindOfLabel(id: string): Subject['kind'] {
  if (id === PREFERENCE_LABEL) return 'pair';
  if (id.startsWith(MODE_LABEL_PREFIX)) return 'signal';
  return 'attempt';
}

/** A stable key of a subject: `attempt:<runId>/<attemptId>`, `signal:<signalKey>`, `pair:<a>|<b>`. */
export function subjectKey(subject: Subject): string {
  const attempt = (a: { runId: string; attemptId: string }) => `attempt:${a.runId}/${a.attemptId}`;
  if (subject.kind === 'attempt') return attempt(subject);
  if (subject.kind === 'signal') return `signal:${subject.signalKey}`;
  return `pair:${attempt(subject.a)}|${attempt(subject.b)}`;
}

/** The first 8 bytes of sha256(text) as a number in [0, 1): a deterministic "random" draw. */
export function hashUnit(text: string): number {
  const hex = createHash('sha256').update(text).digest('hex').slice(0, 13);
  return Number.parseInt(hex, 16) / 2 ** 52;
}

/** Whether `key` falls in a deterministic `fraction` of all keys (the same key is always in or always out). */
export function inFraction(key: string, fraction: number): boolean {
  return fraction > 0 && hashUnit(key) < fraction;
}

/** An item's id: a hash of its queue and subject (the same subject queued twice is one item). */
export function annotationItemId(queue: string, subject: Subject): string {
  return createHash('sha256').update(`${queue}\n${subjectKey(subject)}`).digest('hex').slice(0, 20);
}

const Labels = z.record(z.string(), z.string());

/** The judge's verdict stored with a drift item: what the person's label is compared with. */
export const JudgeVerdictNoteSchema = z.object({
  ref: JudgeRefSchema,
  labels: Labels,
  fine: z.boolean(),
  userRating: z.string().optional(),
  at: z.string(),
});
export type JudgeVerdictNote = z.infer<typeof JudgeVerdictNoteSchema>;

/** One annotation item as stored and served. */
export const AnnotationItemSchema = z.object({
  id: z.string(),
  queue: z.string(),
  reason: AnnotationReasonSchema,
  subject: SubjectSchema,
  subjectKey: z.string(),
  /** The label ids a person gives (each in its vocabulary, `labelValues`). */
  asks: z.array(z.string()).min(1),
  /** People needed: 2 on the two-person slice, else 1. */
  needs: z.union([z.literal(1), z.literal(2)]),
  goldSet: z.string().optional(),
  status: z.enum(ANNOTATION_STATUSES),
  createdAt: z.string(),
  /** Bumped on every write: the optimistic-concurrency field of a label. */
  revision: z.number().int().nonnegative(),
  labels: Labels.optional(),
  annotator: z.string().optional(),
  labelledAt: z.string().optional(),
  secondLabels: Labels.optional(),
  secondAnnotator: z.string().optional(),
  secondLabelledAt: z.string().optional(),
  doneAt: z.string().optional(),
  /** Characters of what is judged (diff or final message; a pair: a − b), when it could be read cheaply. */
  length: z.number().optional(),
  /** Drift items: the production verdict the person's labels are compared with. */
  judge: JudgeVerdictNoteSchema.optional(),
});
export type AnnotationItem = z.infer<typeof AnnotationItemSchema>;

/** A gold set: the items a judge is calibrated on, labelled by people. */
export const GoldSetSchema = z.object({
  name: z.string(),
  /** The judge name it calibrates. */
  judge: z.string(),
  /** The label ids each item asks for (one subject kind). */
  labels: z.array(z.string()).min(1),
  subjectKind: z.enum(['attempt', 'signal', 'pair']),
  /** The share of items two people label (the human ceiling), chosen by hash of the item. */
  twoPersonFraction: z.number().min(0).max(1),
  description: z.string().optional(),
  createdAt: z.string(),
});
export type GoldSet = z.infer<typeof GoldSetSchema>;
