/**
 * What an annotation item asks about its subject, read from the stores: the default label ids (an attempt's task
 * rubric criteria, every mode of the current taxonomy for a signal, `preference` for a pair) and the length of what
 * is judged (an attempt's diff, a signal's text; a pair: a − b) for the length-bias coefficient. Reads only records and
 * at most one blob per attempt; whatever cannot be read is left out, never guessed.
 */
import type { AttemptRecord } from '../../harness/attempt/attempt-record.ts';
import type { Ports } from '../../ports/ports.ts';
import type { RecordsPort } from '../../ports/records.ts';
import { getAttemptRecordByKey } from './attempt-lookup.ts';
import { loadSignalByKey } from '../../modes/signal.ts';
import { ensureTaxonomy } from '../../modes/taxonomy/taxonomy-store.ts';
import { registryKeys } from '../../registry/record-keys.ts';
import { taskRecord } from '../../registry/record-codecs.ts';
import type { Subject } from '../schemas.ts';
import { MODE_LABEL_PREFIX, PREFERENCE_LABEL } from './annotation-item.ts';

type AttemptSubject = Extract<Subject, { kind: 'attempt' }>;
type AttemptLookup = (subject: AttemptSubject) => Promise<AttemptRecord | undefined>;

/**
 * Reads each attempt once however often it is asked for: an item reads its attempt for the rubric and again for the
 * length, and an attempt id without its key prefix costs a listing of the run.
 *
 * @example
 * const lookup = attemptLookup(ports.records);
 * await defaultLabelIds(ports, subject, lookup); await subjectLength(ports, subject, lookup); // one read
 */
export function attemptLookup(records: RecordsPort): AttemptLookup {
  const seen = new Map<string, Promise<AttemptRecord | undefined>>();
  return (subject) => {
    const key = `${subject.runId}\u0000${subject.attemptId}`;
    let found = seen.get(key);
    if (!found) seen.set(key, (found = getAttemptRecordByKey(records, subject.runId, subject.attemptId)));
    return found;
  };
}

/**
 * The label ids of a subject when the caller names none: undefined when they cannot be read (an attempt whose task
 * has no rubric in the registry).
 *
 * @example
 * await defaultLabelIds(ports, { kind: 'signal', signalKey: 'feedback:e1' }); // ['mode:scope-calibration', …]
 */
export async function defaultLabelIds(ports: Pick<Ports, 'records' | 'blobs'>, subject: Subject, lookup: AttemptLookup = attemptLookup(ports.records)): Promise<string[] | undefined> {
  if (subject.kind === 'pair') return [PREFERENCE_LABEL];
  if (subject.kind === 'signal') {
    const taxonomy = await ensureTaxonomy(ports.records);
    return taxonomy.modes.map((m) => `${MODE_LABEL_PREFIX}${m.id}`);
  }
  return rubricIdsOfAttempt(ports, await lookup(subject));
}

/** The criterion ids of an attempt's task rubric: each criterion's `id`, or `c1`, `c2`, … by position. */
async function rubricIdsOfAttempt(ports: Pick<Ports, 'records' | 'blobs'>, attempt: AttemptRecord | undefined): Promise<string[] | undefined> {
  if (!attempt) return undefined;
  const key = registryKeys.task(attempt.suite, attempt.taskId);
  const stored = taskRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
  let task: Record<string, unknown> | undefined = stored?.task;
  if (!task && stored?.taskKey) {
    const body = await ports.blobs.get(stored.taskKey);
    if (body) task = JSON.parse(Buffer.from(body).toString('utf8')) as Record<string, unknown>;
  }
  const rubric = (task ?? (stored as Record<string, unknown> | undefined))?.['rubric'];
  if (!Array.isArray(rubric) || rubric.length === 0) return undefined;
  return rubric.map((c: unknown, i) => {
    const id = (c as { id?: unknown } | null)?.id;
    return typeof id === 'string' && id !== '' ? id : `c${i + 1}`;
  });
}

/**
 * Characters of what is judged: an attempt's diff, a signal's comment or report text; a pair, a's minus b's.
 * Undefined when it cannot be read.
 *
 * @example
 * await subjectLength(ports, { kind: 'signal', signalKey: 'feedback:e1' }); // 84
 */
export async function subjectLength(ports: Pick<Ports, 'records' | 'blobs'>, subject: Subject, lookup: AttemptLookup = attemptLookup(ports.records)): Promise<number | undefined> {
  if (subject.kind === 'signal') return (await loadSignalByKey(ports, subject.signalKey))?.text?.length;
  if (subject.kind === 'attempt') return attemptLength(ports, await lookup(subject));
  const [a, b] = await Promise.all([lookup(subject.a).then((r) => attemptLength(ports, r)), lookup(subject.b).then((r) => attemptLength(ports, r))]);
  return a === undefined || b === undefined ? undefined : a - b;
}

async function attemptLength(ports: Pick<Ports, 'blobs'>, attempt: AttemptRecord | undefined): Promise<number | undefined> {
  if (!attempt?.diffKey) return undefined;
  const diff = await ports.blobs.get(attempt.diffKey);
  return diff === undefined ? undefined : Buffer.from(diff).toString('utf8').length;
}
