/**
 * Reading and writing experiment records (`EXPERIMENT#<id>` / `EXPERIMENT`) and their history (`CHANGE#<seq>`).
 *
 * Every write bumps `revision` and is conditional on the revision it read, so a person's stop, the schedule's ramp and
 * a decision never overwrite each other: the loser reads again and decides again (`updateExperiment` does it for its
 * caller). Each write that lands appends one change entry whose `seq` is the revision it wrote (`created` is 0), so
 * the history is in order and a retried entry overwrites itself rather than doubling.
 *
 * @example
 * const { record, changed } = await updateExperiment(records, 'exp-1', (e) => (e.status === 'draft' ? { ...e, status: 'running' } : undefined),
 *   { change: 'started', by: 'key:abc', detail: {} }, new Date());
 */
import { ConflictError, NotFoundError } from '../errors.ts';
import type { RecordsPort } from '../ports/records.ts';
import { experimentChangeRecord, experimentRecord } from './record-codecs.ts';
import { experimentKeys } from './record-keys.ts';
import type { ExperimentChange, ExperimentRecord, ExperimentStatus } from './schemas.ts';

/** Tries of a read-change-write that lost to another writer before it gives up (each loss is a write that landed). */
const UPDATE_TRIES = 8;

/** The most items one page of `listExperiments` returns. */
export const EXPERIMENT_LIST_MAX = 200;

/** What `updateExperiment` records about a change that landed. */
export interface ChangeNote {
  change: ExperimentChange['change'];
  by: string;
  detail: Record<string, unknown>;
}

/**
 * The experiment, or undefined.
 *
 * @example
 * const e = await findExperiment(records, 'exp-1');
 */
export async function findExperiment(records: RecordsPort, id: string): Promise<ExperimentRecord | undefined> {
  const key = experimentKeys.experiment(id);
  return experimentRecord.decodeIfPresent(await records.get(key.pk, key.sk));
}

/**
 * The experiment; `Flywheel.NotFoundError` (404) when there is none.
 *
 * @example
 * const e = await getExperiment(records, 'exp-1');
 */
export async function getExperiment(records: RecordsPort, id: string): Promise<ExperimentRecord> {
  const found = await findExperiment(records, id);
  if (!found) throw new NotFoundError(`No experiment ${id}`);
  return found;
}

/**
 * Experiments newest first, of one status when `status` is given (else grouped by status, in the index's order:
 * stopped, running, draft, decided, each newest first). A page of `limit` (default 50, at most 200); pass `cursor` for the next.
 *
 * @example
 * const { items } = await listExperiments(records, { status: 'running' });
 */
export async function listExperiments(
  records: RecordsPort,
  options: { status?: ExperimentStatus; limit?: number; cursor?: string } = {},
): Promise<{ items: ExperimentRecord[]; cursor?: string }> {
  const page = await records.query({
    index: 'gsi1',
    partition: experimentKeys.all,
    ...(options.status ? { sort: { beginsWith: `${options.status}#` } } : {}),
    limit: Math.min(Math.max(1, options.limit ?? 50), EXPERIMENT_LIST_MAX),
    descending: true,
    ...(options.cursor ? { cursor: options.cursor } : {}),
  });
  return { items: page.items.map((i) => experimentRecord.decode(i)), ...(page.cursor ? { cursor: page.cursor } : {}) };
}

/**
 * Writes a new experiment (revision 0) and its `created` change; when the id is taken, the stored one with
 * `created: false` (the caller decides whether it is the same definition).
 *
 * @example
 * const { created } = await createExperimentRecord(records, record, 'key:abc', new Date());
 */
export async function createExperimentRecord(
  records: RecordsPort,
  record: ExperimentRecord,
  by: string,
  now: Date,
): Promise<{ record: ExperimentRecord; created: boolean }> {
  const fresh = { ...record, revision: 0 };
  const { written } = await records.put(experimentRecord.encode(fresh), { condition: { kind: 'absent' } });
  if (!written) return { record: await getExperiment(records, record.definition.id), created: false };
  await putChange(records, fresh, { change: 'created', by, detail: { origin: fresh.origin.kind } }, now);
  return { record: fresh, created: true };
}

/**
 * Reads the experiment, applies `mutate` and writes the result over the revision it read, with one change entry; on a
 * lost race reads again and applies `mutate` again (it must be a pure function of the record, and may throw to refuse:
 * a `ConflictError` for a transition the status forbids). `mutate` returning undefined writes nothing
 * (`changed: false`, the record as read).
 *
 * @example
 * await updateExperiment(records, id, (e) => ({ ...e, rampStep: e.rampStep + 1 }), { change: 'ramped', by: 'schedule', detail: {} }, now);
 */
export async function updateExperiment(
  records: RecordsPort,
  id: string,
  mutate: (current: ExperimentRecord) => ExperimentRecord | undefined,
  change: ChangeNote,
  now: Date,
): Promise<{ record: ExperimentRecord; changed: boolean }> {
  for (let i = 0; i < UPDATE_TRIES; i++) {
    const current = await getExperiment(records, id);
    const next = mutate(current);
    if (next === undefined) return { record: current, changed: false };
    // The id and the creation are not the mutation's to change: the record stays under its key.
    const written: ExperimentRecord = { ...next, definition: { ...next.definition, id: current.definition.id }, createdAt: current.createdAt, revision: current.revision + 1 };
    const result = await records.put(experimentRecord.encode(written), { condition: { kind: 'unchanged', field: 'revision', value: current.revision } });
    if (result.written) {
      await putChange(records, written, change, now);
      return { record: written, changed: true };
    }
  }
  throw new ConflictError(`experiment ${id} kept changing under ${UPDATE_TRIES} writes: try again`);
}

/**
 * The experiment's history, oldest first.
 *
 * @example
 * const changes = await listChanges(records, 'exp-1'); // [{ seq: 0, change: 'created', … }, { seq: 1, change: 'started', … }]
 */
export async function listChanges(records: RecordsPort, id: string): Promise<ExperimentChange[]> {
  const out: ExperimentChange[] = [];
  let cursor: string | undefined;
  do {
    const page = await records.query({ partition: experimentKeys.experiment(id).pk, sort: { beginsWith: experimentKeys.changePrefix }, limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const item of page.items) out.push(experimentChangeRecord.decode(item));
    cursor = page.cursor;
  } while (cursor);
  return out;
}

/** The change entry of the revision `record` holds (overwrites itself when retried). */
async function putChange(records: RecordsPort, record: ExperimentRecord, note: ChangeNote, now: Date): Promise<void> {
  const entry: ExperimentChange = { experimentId: record.definition.id, at: now.toISOString(), seq: record.revision, change: note.change, by: note.by, detail: note.detail };
  await records.put(experimentChangeRecord.encode(entry));
}
