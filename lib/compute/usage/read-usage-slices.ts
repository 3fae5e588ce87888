/**
 * Reads usage slices: the stored ones of ended jobs (by day, or by run) and those of jobs still running, computed up
 * to now, so a long training run counts before it ends.
 *
 * @example
 * const slices = await readDaySlices(records, '2026-12-01', '2026-12-31', Date.now());
 */
import type { QueryInput, RecordItem, RecordsPort } from '../../ports/records.ts';
import { jobUsageRecord, usageSliceRecord } from '../record-codecs.ts';
import { computeKeys } from '../record-keys.ts';
import type { JobUsageRecord, UsageSlice } from '../schemas.ts';
import { usageSlices } from './usage-slices.ts';

/** Every item of a query, page after page. */
export async function queryAll(records: RecordsPort, input: QueryInput): Promise<RecordItem[]> {
  const items: RecordItem[] = [];
  let cursor: string | undefined;
  do {
    const page = await records.query({ ...input, limit: 1000, ...(cursor ? { cursor } : {}) });
    items.push(...page.items);
    cursor = page.cursor;
  } while (cursor);
  return items;
}

/** The UTC days from `from` to `to`, both included. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let at = Date.parse(`${from}T00:00:00Z`); at <= Date.parse(`${to}T00:00:00Z`); at += 86_400_000) days.push(new Date(at).toISOString().slice(0, 10));
  return days;
}

/** Jobs that may still be running (their slices are computed, not stored). */
export async function readOpenJobs(records: RecordsPort): Promise<JobUsageRecord[]> {
  return (await queryAll(records, { index: 'gsi2', partition: computeKeys.openJobs })).map((item) => jobUsageRecord.decode(item));
}

/** Slices of the days `from`..`to` (of one category, when named): stored ones of ended jobs, and running jobs' up to `now`. */
export async function readDaySlices(records: RecordsPort, from: string, to: string, now: number, category?: string): Promise<UsageSlice[]> {
  const sort = category ? { sort: { beginsWith: `${category}#` } } : {};
  const stored = await Promise.all(daysBetween(from, to).map((day) => queryAll(records, { index: 'gsi2', partition: computeKeys.daySlices(day), ...sort })));
  const open = (await readOpenJobs(records))
    .filter((job) => !category || job.category === category)
    .flatMap((job) => usageSlices(job, now))
    .filter((s) => s.day >= from && s.day <= to);
  return [...stored.flat().map((item) => usageSliceRecord.decode(item)), ...open];
}

/** Every slice of one run, over its whole life (running jobs up to `now`). */
export async function readRunSlices(records: RecordsPort, runId: string, now: number): Promise<UsageSlice[]> {
  const stored = (await queryAll(records, { index: 'gsi1', partition: computeKeys.runSlices(runId) })).map((item) => usageSliceRecord.decode(item));
  const open = (await readOpenJobs(records)).filter((job) => job.runId === runId).flatMap((job) => usageSlices(job, now));
  return [...stored, ...open];
}
