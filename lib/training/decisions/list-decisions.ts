/**
 * Lists decision records: of one attempt (one partition: what the dataset builder reads), of one eval run, or all,
 * newest first, filtered by status and hint class. Filters apply to the pages read: a page may hold fewer than
 * `limit` items while a `cursor` says more follow (at most `MAX_PAGES_READ` pages are read per call).
 */
import { z } from 'zod';
import type { Ports } from '../../ports/ports.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { decisionRecord } from '../record-codecs.ts';
import { decisionRecordKeys } from '../record-keys.ts';
import { DECISION_STATUSES, HintClassSchema, type DecisionRecord } from '../schemas.ts';

/** Pages of the index read for one answer when filters keep few items. */
export const MAX_PAGES_READ = 10;

export const ListDecisionsQuery = z.strictObject({
  run: z.string().min(1).max(300).optional(),
  attempt: z.string().min(1).max(400).optional(),
  status: z.enum(DECISION_STATUSES).optional(),
  hintClass: HintClassSchema.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().min(1).max(2048).optional(),
});
export type ListDecisionsQuery = z.input<typeof ListDecisionsQuery>;

/**
 * @example
 * const { items, cursor } = await listDecisions(ports, { run: 'nightly-1', status: 'usable' });
 */
export async function listDecisions(ports: Pick<Ports, 'records'>, rawQuery: unknown): Promise<{ items: DecisionRecord[]; cursor?: string }> {
  const q = parseInput(ListDecisionsQuery, rawQuery, 'query');
  const where =
    q.attempt !== undefined
      ? { index: 'table' as const, partition: decisionRecordKeys.attempt(q.attempt), sort: { beginsWith: decisionRecordKeys.sortPrefix } }
      : q.run !== undefined
        ? { index: 'gsi2' as const, partition: decisionRecordKeys.byRun(q.run) }
        : { index: 'gsi1' as const, partition: decisionRecordKeys.all };
  const items: DecisionRecord[] = [];
  let cursor = q.cursor;
  for (let pages = 0; pages < MAX_PAGES_READ && items.length < q.limit; pages++) {
    const page = await ports.records.query({ ...where, descending: true, limit: q.limit - items.length, ...(cursor ? { cursor } : {}) });
    for (const item of page.items) {
      const d = decisionRecord.decode(item);
      if ((q.status === undefined || d.status === q.status) && (q.hintClass === undefined || d.hintClass === q.hintClass)) items.push(d);
    }
    cursor = page.cursor;
    if (!cursor) break;
  }
  if (q.attempt !== undefined) items.sort((a, b) => b.lineage.createdAt.localeCompare(a.lineage.createdAt));
  return { items, ...(cursor ? { cursor } : {}) };
}

/**
 * Every usable decision record of one attempt (the leakage check passed), newest first: what the dataset builder puts
 * on an attempt's rows.
 *
 * @example
 * const decisions = await listUsableDecisions(ports, 'nightly-1.calc__add.strict.0');
 */
export async function listUsableDecisions(ports: Pick<Ports, 'records'>, attemptId: string): Promise<DecisionRecord[]> {
  const out: DecisionRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await ports.records.query({ partition: decisionRecordKeys.attempt(attemptId), sort: { beginsWith: decisionRecordKeys.sortPrefix }, limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const item of page.items) {
      const d = decisionRecord.decode(item);
      if (d.status === 'usable') out.push(d);
    }
    cursor = page.cursor;
  } while (cursor);
  return out.sort((a, b) => b.lineage.createdAt.localeCompare(a.lineage.createdAt));
}
