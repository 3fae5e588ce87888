/**
 * Failure-mode counts of one checkpoint on one day (`modeKeys.dayRollup`), so a timeline over weeks or the overview's
 * "last 7 days" reads one small record per checkpoint and day instead of every tally row.
 *
 * A day's counts are stored whenever they are counted, and counted again from its tally rows (`MODETALLY#<model>#<day>`)
 * once the stored count is older than the day's `maxAgeMs`: a minute for today, ten minutes for the three days before
 * (the chain's and people's labels land), a day for older ones (a person relabelling an old signal). So a timeline or
 * the overview reads one small record per checkpoint and day and, now and then, one day's rows again; a count is at
 * most that old. A vote replaced by a newer one under the same feedbackKey counts once in its day, as its newest vote.
 */
import type { RecordsPort } from '../ports/records.ts';
import { forEachLimited } from '../shared/for-each-limited.ts';
import { modeDayRollupRecord, tallyRecord, type ModeDayCounts, type StoredTally } from './record-codecs.ts';
import { modeKeys } from './record-keys.ts';

const DAY_MS = 86_400_000;

/** How old a day's stored count may be before it is counted again. */
export function maxAgeMs(day: string, now: Date): number {
  const end = Date.parse(`${day}T00:00:00Z`) + DAY_MS;
  if (end > now.getTime()) return 60_000; // today
  if (end > now.getTime() - 3 * DAY_MS) return 10 * 60_000;
  return DAY_MS;
}

export type { ModeDayCounts } from './record-codecs.ts';

/**
 * The counts of each day (`YYYY-MM-DD`, ascending) for one checkpoint.
 *
 * @example
 * const days = await readModeDays(records, 'coder-7b:step-100', ['2026-12-01', '2026-12-02']);
 */
export async function readModeDays(records: RecordsPort, model: string, days: readonly string[], now: Date = new Date()): Promise<Map<string, ModeDayCounts>> {
  const out = new Map<string, ModeDayCounts>();
  if (days.length === 0) return out;
  const stored = new Map<string, ModeDayCounts>();
  let cursor: string | undefined;
  do {
    const page = await records.query({ partition: modeKeys.dayRollupPartition(model), sort: { between: [days[0]!, days[days.length - 1]!] }, limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const item of page.items) {
      const r = modeDayRollupRecord.decode(item);
      stored.set(r.day, r);
    }
    cursor = page.cursor;
  } while (cursor);
  const missing: string[] = [];
  for (const day of days) {
    const r = stored.get(day);
    if (r && now.getTime() - Date.parse(r.computedAt) < maxAgeMs(day, now)) out.set(day, r);
    else missing.push(day);
  }
  await forEachLimited(missing, 8, async (day) => {
    const counts = countDay(model, day, await tallyRows(records, model, day), now);
    out.set(day, counts);
    await records.put(modeDayRollupRecord.encode(counts));
  });
  return out;
}

async function tallyRows(records: RecordsPort, model: string, day: string): Promise<StoredTally[]> {
  const rows: StoredTally[] = [];
  let cursor: string | undefined;
  do {
    const page = await records.query({ partition: modeKeys.tallyPartition(model, day), limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const item of page.items) rows.push(tallyRecord.decode(item));
    cursor = page.cursor;
  } while (cursor);
  return rows;
}

function countDay(model: string, day: string, rows: StoredTally[], now: Date): ModeDayCounts {
  const newest = new Map<string, StoredTally>();
  const rest: StoredTally[] = [];
  for (const r of rows) {
    if (!r.feedbackKey) {
      rest.push(r);
      continue;
    }
    const seen = newest.get(r.feedbackKey);
    if (!seen || seen.receivedAt < r.receivedAt || (seen.receivedAt === r.receivedAt && seen.signalKey < r.signalKey)) newest.set(r.feedbackKey, r);
  }
  const kept = [...rest, ...newest.values()];
  const modes: Record<string, number> = {};
  let classified = 0;
  for (const r of kept) {
    if (r.source === 'none') continue;
    classified++;
    for (const m of new Set(r.modes)) modes[m] = (modes[m] ?? 0) + 1;
  }
  return { model, day, signals: kept.length, classified, modes, computedAt: now.toISOString() };
}
