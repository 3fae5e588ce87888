/**
 * `GET /v1/sweeps`: sweeps newest first from the `SWEEPS` index (`gsi1`, sorted by request time), filtered by status
 * and checkpoint on the records read. One call reads at most `MAX_PAGES_READ` index pages: a filtered page may be
 * short while `nextCursor` says more follow. A cursor is the index key of the next sweep to look at.
 */
import { ValidationError } from '../errors.ts';
import type { RecordsPort } from '../ports/records.ts';
import { parseInput } from '../shared/parse-input.ts';
import { ListSweepsQuery, type SweepPage, type SweepSummary } from './list-sweeps-schemas.ts';
import { sweepRecord } from './record-codecs.ts';
import { sweepKeys } from './record-keys.ts';
import type { SweepRecordBody } from './schemas.ts';

/** Index pages one call reads at most. */
export const MAX_PAGES_READ = 10;

/**
 * @example
 * const { sweeps, nextCursor } = await listSweeps(records, { status: 'running' });
 */
export async function listSweeps(records: RecordsPort, rawQuery: unknown): Promise<SweepPage> {
  const q = parseInput(ListSweepsQuery, rawQuery, 'query');
  const from = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
  const sweeps: SweepSummary[] = [];
  let portCursor: string | undefined;
  for (let pages = 0; pages < MAX_PAGES_READ; pages++) {
    const page = await records.query({
      index: 'gsi1',
      partition: sweepKeys.allSweeps,
      descending: true,
      limit: 100,
      ...(from !== undefined ? { sort: { lessThanOrEqual: from } } : {}),
      ...(portCursor ? { cursor: portCursor } : {}),
    });
    for (const item of page.items) {
      // Full: the next answer starts at this item (cursors are our own index keys, so they survive any page size).
      if (sweeps.length >= q.limit) return { sweeps, nextCursor: encodeCursor(item.gsi1sk!) };
      const s = sweepRecord.decode(item);
      if (matches(s, q.status, q.checkpoint)) sweeps.push(summary(s));
    }
    portCursor = page.cursor;
    if (!portCursor) return { sweeps };
  }
  // Read as much as one call may: resume at the next item of the index.
  const next = await records.query({ index: 'gsi1', partition: sweepKeys.allSweeps, descending: true, limit: 1, cursor: portCursor!, ...(from !== undefined ? { sort: { lessThanOrEqual: from } } : {}) });
  return next.items[0] ? { sweeps, nextCursor: encodeCursor(next.items[0].gsi1sk!) } : { sweeps };
}

function encodeCursor(gsi1sk: string): string {
  return Buffer.from(gsi1sk, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  const key = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  if (!/^\d{4}-[^#]*#[A-Za-z0-9_-]+$/.test(key)) throw new ValidationError('Invalid query: cursor: not a cursor this route gave', [{ path: 'cursor', message: 'not a cursor this route gave' }]);
  return key;
}

function matches(s: SweepRecordBody, status: string | undefined, checkpoint: string | undefined): boolean {
  if (status === 'running' ? !(s.status === 'validated' || s.status === 'planned') : status !== undefined && s.status !== status) return false;
  return checkpoint === undefined || s.checkpoints.includes(checkpoint);
}

function summary(s: SweepRecordBody): SweepSummary {
  return {
    sweepId: s.sweepId,
    status: s.status,
    trigger: s.trigger,
    requestedAt: s.requestedAt,
    ...(s.requestedBy !== undefined ? { requestedBy: s.requestedBy } : {}),
    checkpoints: s.checkpoints,
    suites: s.suites,
    modes: s.modes,
    attemptsPerTask: s.attemptsPerTask,
    ...(s.shardCount !== undefined ? { shardCount: s.shardCount } : {}),
    ...(s.succeededShards !== undefined ? { succeededShards: s.succeededShards } : {}),
    ...(s.failedShards !== undefined ? { failedShards: s.failedShards } : {}),
    ...(s.finishedAt !== undefined ? { finishedAt: s.finishedAt } : {}),
  };
}
