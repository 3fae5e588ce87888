import { z } from 'zod';
import { toFieldIssues } from '../shared/field-issues.ts';
import { ValidationError } from '../errors.ts';
import type { Ports } from '../ports/ports.ts';
import type { QueryInput } from '../ports/records.ts';
import { toFeedbackView } from './feedback-record-view.ts';
import { feedbackEventRecord, type StoredFeedbackEvent } from './record-codecs.ts';
import { feedbackKeys, utcDay } from './record-keys.ts';
import { ListFeedbackQuery, type FeedbackRecordView } from './schemas.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Default window without `since`. */
const DEFAULT_WINDOW_DAYS = 7;
/** Longest by-day window one listing may walk. */
const MAX_WINDOW_DAYS = 400;
/** Store queries one page may spend (empty days, filtered-out items) before it answers with a cursor. */
const QUERY_BUDGET = 40;

/** Where the previous page stopped: the partition (`d`: day, for by-day listing) and the last sort key seen. */
const Cursor = z.object({ d: z.string().optional(), k: z.string() });
type Cursor = z.output<typeof Cursor>;

export interface FeedbackListPage {
  items: Array<Omit<FeedbackRecordView, 'history'>>;
  cursor?: string;
}

/**
 * Lists stored feedback newest first (by receivedAt), by model (index gsi1) or, without a model, by day partitions
 * (index gsi2) between `since` and `until` (default: the last 7 days). `rating` and `source` filter the page; the
 * cursor is our own (partition + last sort key), so filtered pages are still full and resumable.
 * `current` in a listing comes from the `supersededBy` mark; `GET /v1/feedback/{eventId}` reads the authoritative
 * current vote.
 *
 * @example
 * const page = await listFeedback(ports, { model: 'ckpt-7', rating: 'down', limit: '20' });
 * const next = await listFeedback(ports, { model: 'ckpt-7', rating: 'down', cursor: page.cursor });
 */
export async function listFeedback(ports: Ports, rawQuery: unknown): Promise<FeedbackListPage> {
  const parsed = ListFeedbackQuery.safeParse(rawQuery ?? {});
  if (!parsed.success) throw new ValidationError('Invalid query string', toFieldIssues(parsed.error.issues));
  const q = parsed.data;
  const until = q.until ? new Date(q.until) : ports.now();
  const since = q.since ? new Date(q.since) : new Date(until.getTime() - DEFAULT_WINDOW_DAYS * DAY_MS);
  if (since.getTime() > until.getTime()) {
    throw new ValidationError('Invalid query string', [{ path: 'since', message: 'must not be after until' }]);
  }
  if (!q.model && until.getTime() - since.getTime() > MAX_WINDOW_DAYS * DAY_MS) {
    throw new ValidationError('Invalid query string', [
      { path: 'since', message: `without model, since and until may be at most ${MAX_WINDOW_DAYS} days apart` },
    ]);
  }
  let cursor: Cursor | undefined;
  if (q.cursor) {
    cursor = decodeCursor(q.cursor);
    if (!cursor) throw new ValidationError('Invalid query string', [{ path: 'cursor', message: 'is not a cursor from this API' }]);
  }

  const lower = since.toISOString();
  const upper = `${until.toISOString()}~`; // '~' sorts after '#' and every id character: includes all of `until`
  const sortField = q.model ? 'gsi1sk' : 'gsi2sk';
  const partitions: Array<{ partition: string; day?: string }> = [];
  if (q.model) {
    partitions.push({ partition: feedbackKeys.byModel(q.model) });
  } else {
    const first = utcDay(lower);
    for (let t = Date.parse(`${utcDay(until.toISOString())}T00:00:00Z`); ; t -= DAY_MS) {
      const day = new Date(t).toISOString().slice(0, 10);
      if (day < first) break;
      partitions.push({ partition: feedbackKeys.byDay(day), day });
    }
  }
  let start = 0;
  if (cursor?.d !== undefined) {
    start = partitions.findIndex((p) => p.day === cursor.d);
    if (start < 0) throw new ValidationError('Invalid query string', [{ path: 'cursor', message: 'does not belong to this window' }]);
  }

  const items: FeedbackListPage['items'] = [];
  const matches = (e: StoredFeedbackEvent) => (!q.rating || e.rating === q.rating) && (!q.source || e.source === q.source);
  let queries = 0;
  for (let p = start; p < partitions.length; p++) {
    const { partition, day } = partitions[p]!;
    const exclusiveTop = p === start && cursor ? cursor.k : undefined;
    let lastSeen = exclusiveTop ?? upper;
    let portCursor: string | undefined;
    do {
      if (queries === QUERY_BUDGET) return { items, cursor: encodeCursor({ ...(day ? { d: day } : {}), k: lastSeen }) };
      const input: QueryInput = {
        index: q.model ? 'gsi1' : 'gsi2',
        partition,
        sort: { between: [lower, exclusiveTop ?? upper] },
        descending: true,
        limit: Math.min(1000, (q.limit - items.length) * (q.rating || q.source ? 4 : 1) + 1),
        ...(portCursor ? { cursor: portCursor } : {}),
      };
      const page = await ports.records.query(input);
      queries++;
      for (const item of page.items) {
        const sk = item[sortField] ?? '';
        if (sk === exclusiveTop) continue;
        lastSeen = sk;
        const event = feedbackEventRecord.decode(item);
        if (!matches(event)) continue;
        items.push(toFeedbackView(event, event.supersededBy === undefined));
        if (items.length === q.limit) {
          return { items, cursor: encodeCursor({ ...(day ? { d: day } : {}), k: sk }) };
        }
      }
      portCursor = page.cursor;
    } while (portCursor);
  }
  return { items };
}

function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

function decodeCursor(s: string): Cursor | undefined {
  try {
    const c = Cursor.safeParse(JSON.parse(Buffer.from(s, 'base64url').toString('utf8')));
    return c.success ? c.data : undefined;
  } catch {
    return undefined;
  }
}
