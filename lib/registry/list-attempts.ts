/**
 * `GET /v1/attempts`: attempts newest sweep first, filtered by sweep, checkpoint, suite, task, mode and outcome, a page
 * at a time.
 *
 * How it reads (and scales): sweeps newest first from the `SWEEPS` index (or the one sweep named); per sweep, its shard
 * parts on the key prefix the checkpoint/suite/mode filter allows (`attempt-sources.ts`); per shard child, its attempt
 * partition, on the prefix `ATTEMPT#<task>#<mode>#` when a task is named. So a filter reads only the partitions that can
 * hold matches; only `outcome` (and `mode` without a task) is checked on the items read. One call reads at most
 * `MAX_PARTITIONS_PER_CALL` partitions and `MAX_ITEMS_PER_CALL` items: a page may be short (even empty) while
 * `nextCursor` says more follow, and no call is unbounded, however many attempts there are.
 */
import { z } from 'zod';
import { ValidationError } from '../errors.ts';
import { attemptRecord } from '../harness/attempt/record-codecs.ts';
import { ATTEMPT_SORT_PREFIX, evalPartition } from '../harness/attempt/record-keys.ts';
import type { Ports } from '../ports/ports.ts';
import { parseInput } from '../shared/parse-input.ts';
import { sweepRecord } from '../sweeps/record-codecs.ts';
import { sweepKeys } from '../sweeps/record-keys.ts';
import { findSweep } from '../sweeps/sweep-record.ts';
import type { SweepRecordBody } from '../sweeps/schemas.ts';
import { ListAttemptsQuery, type AttemptPage, type AttemptSummary } from './attempt-schemas.ts';
import { listAttemptSources, type AttemptSource } from './attempt-sources.ts';
import { summarizeAttempt } from './attempt-summary.ts';

/** Partitions (sweep lists, shard parts, attempt partitions) one call reads at most. */
export const MAX_PARTITIONS_PER_CALL = 400;
/** Attempt items one call reads at most. */
export const MAX_ITEMS_PER_CALL = 5000;

/** Where the walk stopped: the sweep (its index sort key), the source within it, the child, the page within. */
const CursorSchema = z.strictObject({
  k: z.string().optional(),
  s: z.number().int().min(0),
  c: z.number().int().min(0),
  a: z.string().optional(),
});
type Cursor = z.infer<typeof CursorSchema>;

function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c), 'utf8').toString('base64url');
}

function decodeCursor(raw: string): Cursor {
  try {
    return CursorSchema.parse(JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')));
  } catch {
    throw new ValidationError('Invalid query: cursor: not a cursor this route gave', [{ path: 'cursor', message: 'not a cursor this route gave' }]);
  }
}

/**
 * @example
 * const page = await listAttempts(ports, { checkpoint: 'coder-7b:step-100', outcome: 'failed', limit: '50' });
 * const next = page.nextCursor && await listAttempts(ports, { checkpoint: 'coder-7b:step-100', outcome: 'failed', cursor: page.nextCursor });
 */
export async function listAttempts(ports: Pick<Ports, 'records' | 'blobs'>, rawQuery: unknown): Promise<AttemptPage> {
  const q = parseInput(ListAttemptsQuery, rawQuery, 'query');
  const start: Cursor = q.cursor ? decodeCursor(q.cursor) : { s: 0, c: 0 };
  const budget = { partitions: MAX_PARTITIONS_PER_CALL, items: MAX_ITEMS_PER_CALL };
  const out: AttemptSummary[] = [];
  const filter = { ...(q.checkpoint ? { checkpoint: q.checkpoint } : {}), ...(q.suite ? { suite: q.suite } : {}), ...(q.mode ? { mode: q.mode } : {}) };
  const residual = q.outcome !== undefined || (q.mode !== undefined && q.task === undefined);
  const sortPrefix = q.task !== undefined ? `${ATTEMPT_SORT_PREFIX}${q.task}#${q.mode ? `${q.mode}#` : ''}` : ATTEMPT_SORT_PREFIX;

  /** Walks one sweep from (s, c, q); returns the cursor to resume within it, or undefined when it is done. */
  const walkSweep = async (sweep: SweepRecordBody, from: Cursor): Promise<Cursor | undefined> => {
    budget.partitions--;
    const sources: AttemptSource[] = await listAttemptSources(ports, sweep, filter);
    for (let s = from.s; s < sources.length; s++) {
      const source = sources[s]!;
      for (let c = s === from.s ? from.c : 0; c < source.arraySize; c++) {
        // Resume after the last key read (`a`), so a page cut at `limit` loses nothing and repeats nothing.
        let after = s === from.s && c === from.c ? from.a : undefined;
        for (;;) {
          if (out.length >= q.limit || budget.partitions <= 0 || budget.items <= 0) return { s, c, ...(after ? { a: after } : {}) };
          budget.partitions--;
          const page = await ports.records.query({
            partition: evalPartition(`${source.runId}.shard-${c}`),
            sort: after ? { between: [`${after}\u0000`, prefixSuccessor(sortPrefix)] } : { beginsWith: sortPrefix },
            limit: Math.min(1000, (q.limit - out.length) * (residual ? 4 : 1)),
          });
          budget.items -= page.items.length;
          for (const item of page.items) {
            after = item.sk;
            if (!item.sk.startsWith(sortPrefix)) continue;
            const a = attemptRecord.decode(item);
            if (q.outcome !== undefined && a.status !== q.outcome) continue;
            if (q.mode !== undefined && a.mode !== q.mode) continue;
            if (q.task !== undefined && a.taskId !== q.task) continue;
            out.push(summarizeAttempt(a, source.checkpoint));
            if (out.length >= q.limit) return { s, c, a: after };
          }
          if (!page.cursor) break;
        }
      }
    }
    return undefined;
  };

  if (q.sweep !== undefined) {
    const sweep = await findSweep(ports.records, q.sweep);
    if (!sweep) return { attempts: [] };
    const next = await walkSweep(sweep, start);
    return { attempts: out, ...(next ? { nextCursor: encodeCursor(next) } : {}) };
  }

  // Sweeps newest first; resume at the sweep the cursor names (its own sort key, included).
  let indexCursor: string | undefined;
  do {
    budget.partitions--;
    const page = await ports.records.query({
      index: 'gsi1',
      partition: sweepKeys.allSweeps,
      descending: true,
      limit: 20,
      ...(start.k !== undefined ? { sort: { lessThanOrEqual: start.k } } : {}),
      ...(indexCursor ? { cursor: indexCursor } : {}),
    });
    for (const item of page.items) {
      const sweep = sweepRecord.decode(item);
      const key = sweepKeys.sweepOrder(sweep.requestedAt, sweep.sweepId);
      const from = start.k === key ? start : { s: 0, c: 0 };
      if (out.length >= q.limit || budget.partitions <= 0 || budget.items <= 0) return { attempts: out, nextCursor: encodeCursor({ ...from, k: key }) };
      const next = await walkSweep(sweep, from);
      if (next) return { attempts: out, nextCursor: encodeCursor({ ...next, k: key }) };
    }
    indexCursor = page.cursor;
  } while (indexCursor);
  return { attempts: out };
}

/** The smallest string above every string that starts with `prefix` (its last character bumped). */
function prefixSuccessor(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}
