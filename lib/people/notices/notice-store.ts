/**
 * Reading and changing stored notices: get one, acknowledge it (a person saw it), resolve it (a decision was taken or
 * the condition cleared), list them newest first with filters and a cursor. Every change writes over exactly the item
 * it read (`unchanged` on `revision`); a writer that loses reads again and decides again, so an acknowledgement never
 * undoes a repeat that folded in meanwhile, nor the other way round.
 */
import { ConflictError, NotFoundError, ValidationError } from '../../errors.ts';
import type { RecordsPort } from '../../ports/records.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { noticeIndexRecord, noticeRecord, type StoredNotice } from './record-codecs.ts';
import { noticeKeys } from './record-keys.ts';
import { ListNoticesQuery, NOTICE_LIMITS, type NoticePage, type NoticeRecord } from './schemas.ts';

const DEFAULT_PAGE = 50;
/** Tries of a read-modify-write before giving up (each loss means another writer got in first). */
const MAX_WRITE_TRIES = 1000;

/** The stored notice, with its revision; undefined when absent. */
export async function readStoredNotice(records: RecordsPort, noticeId: string): Promise<StoredNotice | undefined> {
  const key = noticeKeys.notice(noticeId);
  return noticeRecord.decodeIfPresent(await records.get(key.pk, key.sk));
}

/** The public record: the stored one without its revision. */
export function publicNotice(stored: StoredNotice): NoticeRecord {
  const { revision: _revision, ...notice } = stored;
  return notice;
}

/**
 * Changes a notice with `change` (over the notice as read; return undefined to leave it), retrying when another writer
 * got in first. Resolves with the notice as written (or as it was, when unchanged).
 *
 * @example
 * const n = await updateNotice(records, 'n-…', (n) => ({ ...n, status: 'acknowledged' }));
 */
export async function updateNotice(
  records: RecordsPort,
  noticeId: string,
  change: (current: StoredNotice) => StoredNotice | undefined,
): Promise<StoredNotice> {
  for (let attempt = 0; attempt < MAX_WRITE_TRIES; attempt++) {
    const current = await readStoredNotice(records, noticeId);
    if (!current) throw new NotFoundError(`No notice ${noticeId}`);
    const next = change(current);
    if (!next) return current;
    const written = { ...next, revision: current.revision + 1 };
    const { written: ok } = await records.put(noticeRecord.encode(written), { condition: { kind: 'unchanged', field: 'revision', value: current.revision } });
    if (ok) return written;
  }
  throw new ConflictError(`Notice ${noticeId} kept changing under ${MAX_WRITE_TRIES} writes`);
}

/**
 * One notice; `Flywheel.NotFound` when there is none.
 *
 * @example
 * const notice = await getNotice(ports.records, 'n-0mabc1234-1a2b3c4d');
 */
export async function getNotice(records: RecordsPort, noticeId: string): Promise<NoticeRecord> {
  const stored = await readStoredNotice(records, noticeId);
  if (!stored) throw new NotFoundError(`No notice ${noticeId}`);
  return publicNotice(stored);
}

/**
 * Marks an open notice acknowledged by `by` (a person saw it: repeats still fold in, and are not delivered again). An
 * acknowledged or resolved notice is returned as it is (a second acknowledgement changes nothing).
 *
 * @example
 * await acknowledgeNotice(ports.records, noticeId, 'ana');
 */
export async function acknowledgeNotice(records: RecordsPort, noticeId: string, by: string, now: Date = new Date()): Promise<NoticeRecord> {
  const stored = await updateNotice(records, noticeId, (n) =>
    n.status === 'open' ? { ...n, status: 'acknowledged', acknowledgedBy: by, acknowledgedAt: now.toISOString() } : undefined,
  );
  return publicNotice(stored);
}

/**
 * Resolves a notice: the action taken (or the condition that cleared it), by whom, and its outcome. A notice already
 * resolved throws `Flywheel.Conflict` (a decision is taken once); the next raise of its dedup key starts a new notice.
 *
 * @example
 * await resolveNotice(ports.records, noticeId, { actionId: 'retire', by: 'ana', outcome: 'Suite forge-py retired' });
 */
export async function resolveNotice(
  records: RecordsPort,
  noticeId: string,
  resolution: { actionId?: string; by: string; outcome: string },
  now: Date = new Date(),
): Promise<NoticeRecord> {
  const stored = await updateNotice(records, noticeId, (n) => {
    if (n.status === 'resolved') throw new ConflictError(`Notice ${noticeId} was already resolved by ${n.resolution?.by ?? 'someone'}: ${n.resolution?.outcome ?? ''}`);
    return {
      ...n,
      status: 'resolved',
      resolution: { ...(resolution.actionId ? { actionId: resolution.actionId } : {}), by: resolution.by, at: now.toISOString(), outcome: resolution.outcome.slice(0, 1000) },
    };
  });
  return publicNotice(stored);
}

interface NoticeCursor {
  /** The last notice id of the page; the next page starts below it. */
  after: string;
}

function encodeCursor(cursor: NoticeCursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

function decodeCursor(cursor: string): NoticeCursor {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as NoticeCursor;
    if (typeof value.after === 'string' && value.after.length > 0) return value;
  } catch {
    // falls through to the validation error
  }
  throw new ValidationError('Invalid query: cursor: not a cursor of GET /v1/notices', [{ path: 'cursor', message: 'not a cursor of GET /v1/notices' }]);
}

/**
 * Notices newest first, filtered by status (an index of its own), kind and severity (read past), `limit` per page
 * (default 50, at most 200), `nextCursor` while more follow.
 *
 * @example
 * const { notices, nextCursor } = await listNotices(ports.records, { status: 'open', kind: 'decision' });
 */
export async function listNotices(records: RecordsPort, query: ListNoticesQuery): Promise<NoticePage> {
  const q = parseInput(ListNoticesQuery, query, 'query');
  const limit = Math.min(q.limit ?? DEFAULT_PAGE, NOTICE_LIMITS.pageMax);
  const after = q.cursor ? decodeCursor(q.cursor).after : undefined;
  const index = q.status ? ({ index: 'gsi2', partition: noticeKeys.byStatus(q.status) } as const) : ({ index: 'gsi1', partition: noticeKeys.all } as const);
  const notices: NoticeRecord[] = [];
  let driverCursor: string | undefined;
  let more = false;
  do {
    const page = await records.query({
      ...index,
      descending: true,
      limit: Math.min(1000, Math.max(limit + 1, 100)),
      ...(after ? { sort: { lessThanOrEqual: after } } : {}),
      ...(driverCursor ? { cursor: driverCursor } : {}),
    });
    for (const item of page.items) {
      const notice = publicNotice(noticeRecord.decode(item));
      if (notice.noticeId === after) continue;
      // An item read through the status index while its status changed: the notice's own status decides.
      if (q.status && notice.status !== q.status) continue;
      if (q.kind && notice.kind !== q.kind) continue;
      if (q.severity && notice.severity !== q.severity) continue;
      if (notices.length === limit) {
        more = true;
        break;
      }
      notices.push(notice);
    }
    driverCursor = page.cursor;
  } while (!more && driverCursor);
  const last = notices.at(-1);
  return { notices, ...(more && last ? { nextCursor: encodeCursor({ after: last.noticeId }) } : {}) };
}

/**
 * Resolves the open (or acknowledged) notice of a dedup key, if there is one: the condition it reported cleared (a
 * stalled run beats again, a failed run was resumed). Resolves with the notice resolved, or undefined.
 *
 * @example
 * await resolveOpenNotice(ports.records, 'stall:training:run-7', { by: 'training', outcome: 'Heartbeats resumed' });
 */
export async function resolveOpenNotice(
  records: RecordsPort,
  dedupKey: string,
  resolution: { by: string; outcome: string },
  now: Date = new Date(),
): Promise<NoticeRecord | undefined> {
  const key = noticeKeys.openByKey(dedupKey);
  const index = noticeIndexRecord.decodeIfPresent(await records.get(key.pk, key.sk));
  if (!index) return undefined;
  const current = await readStoredNotice(records, index.noticeId);
  if (!current || current.status === 'resolved') return undefined;
  try {
    return await resolveNotice(records, index.noticeId, resolution, now);
  } catch (error) {
    if (error instanceof ConflictError) return undefined; // resolved meanwhile
    throw error;
  }
}
