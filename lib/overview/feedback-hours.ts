/**
 * Feedback counted over a window (events, thumbs up, thumbs down) without reading every event of it: each hour that
 * has settled (ended over `SETTLED_AFTER_MS` ago: late deliveries have landed) is counted from the by-day index and
 * stored (`overviewKeys.feedbackHour`), and counted again once the stored count is `HOUR_MAX_AGE_MS` old (an event
 * stored later still shows); the unsettled edges (the window's first partial hour, the last hours) are read live. So
 * "the last 7 days" reads one query of at most 168 small records plus about two hours of events, whatever the volume.
 */
import { feedbackEventRecord } from '../feedback/record-codecs.ts';
import { feedbackKeys } from '../feedback/record-keys.ts';
import type { RecordsPort } from '../ports/records.ts';
import { forEachLimited } from '../shared/for-each-limited.ts';
import { feedbackHourRecord, type FeedbackCounts } from './record-codecs.ts';
import { overviewKeys } from './record-keys.ts';

const HOUR_MS = 3_600_000;
/** An hour is stored once it ended this long ago. */
export const SETTLED_AFTER_MS = HOUR_MS;
/** A stored hour is counted again after this long (events stored late: a queue backlog, a dead-letter redrive). */
export const HOUR_MAX_AGE_MS = 86_400_000;

export type { FeedbackCounts } from './record-codecs.ts';

/**
 * Feedback events received in [since, now).
 *
 * @example
 * const week = await countFeedback(records, new Date(Date.now() - 7 * 86_400_000), new Date());
 */
export async function countFeedback(records: RecordsPort, since: Date, now: Date): Promise<FeedbackCounts> {
  const total: FeedbackCounts = { events: 0, up: 0, down: 0 };
  const add = (c: FeedbackCounts) => {
    total.events += c.events;
    total.up += c.up;
    total.down += c.down;
  };
  const firstHour = Math.ceil(since.getTime() / HOUR_MS) * HOUR_MS;
  const settledEnd = Math.max(firstHour, Math.floor((now.getTime() - SETTLED_AFTER_MS) / HOUR_MS) * HOUR_MS);
  // Leading partial hour and trailing unsettled hours, live.
  add(await countRange(records, since.getTime(), Math.min(firstHour, now.getTime())));
  add(await countRange(records, settledEnd, now.getTime()));
  if (settledEnd <= firstHour) return total;
  const hours: string[] = [];
  for (let h = firstHour; h < settledEnd; h += HOUR_MS) hours.push(hourKey(h));
  const stored = new Map<string, FeedbackCounts & { computedAt: string }>();
  let cursor: string | undefined;
  do {
    const page = await records.query({ partition: overviewKeys.feedbackHours, sort: { between: [hours[0]!, hours[hours.length - 1]!] }, limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const item of page.items) {
      const r = feedbackHourRecord.decode(item);
      stored.set(r.hour, r);
    }
    cursor = page.cursor;
  } while (cursor);
  const fresh = (r: { computedAt: string }) => now.getTime() - Date.parse(r.computedAt) < HOUR_MAX_AGE_MS;
  for (const r of stored.values()) if (fresh(r)) add(r);
  const missing = hours.filter((h) => !stored.has(h) || !fresh(stored.get(h)!));
  await forEachLimited(missing, 8, async (hour) => {
    const start = Date.parse(`${hour}:00:00Z`);
    const c = await countRange(records, start, start + HOUR_MS);
    add(c);
    await records.put(feedbackHourRecord.encode({ ...c, hour, computedAt: now.toISOString() }));
  });
  return total;
}

/** Events received in [fromMs, toMs), read from the by-day index. */
async function countRange(records: RecordsPort, fromMs: number, toMs: number): Promise<FeedbackCounts> {
  const c: FeedbackCounts = { events: 0, up: 0, down: 0 };
  if (toMs <= fromMs) return c;
  const fromIso = new Date(fromMs).toISOString();
  const toIso = new Date(toMs).toISOString();
  for (let d = Math.floor(fromMs / 86_400_000) * 86_400_000; d < toMs; d += 86_400_000) {
    const day = new Date(d).toISOString().slice(0, 10);
    let cursor: string | undefined;
    do {
      // Sort keys are `<receivedAt>#<eventId>`: `between [from, to]` keeps receivedAt in [from, to).
      const page = await records.query({ index: 'gsi2', partition: feedbackKeys.byDay(day), sort: { between: [fromIso, toIso] }, limit: 1000, ...(cursor ? { cursor } : {}) });
      for (const item of page.items) {
        const e = feedbackEventRecord.decode(item);
        c.events++;
        if (e.rating === 'up') c.up++;
        else if (e.rating === 'down') c.down++;
      }
      cursor = page.cursor;
    } while (cursor);
  }
  return c;
}

/** `YYYY-MM-DDTHH` of an hour's start. */
function hourKey(ms: number): string {
  return new Date(ms).toISOString().slice(0, 13);
}
