/**
 * The idempotent store step of the ingest processor: a conditional create of each value on its natural key. A value
 * whose stored copy carries this message's `ingestId` was written by an earlier attempt of the same message (a crash
 * before the work after it), so it counts as stored by this delivery and that work is redone; any other stored copy
 * makes it a duplicate.
 */
import type { RecordsPort } from '../ports/records.ts';
import { forEachLimited } from './for-each-limited.ts';
import type { RecordCodec } from './record-codec.ts';

/** Conditional puts in flight at once (they have no batch form; an unbounded fan-out trips throttling). */
export const PUT_ONCE_CONCURRENCY = 32;

/**
 * Creates each value unless its key is taken; returns the values this delivery owns, in input order, and how many
 * another message had stored.
 *
 * @example
 * const { stored, duplicates } = await putOnce(ports.records, ingestId, reportRecord, reports);
 */
export async function putOnce<T extends { ingestId: string }>(
  records: RecordsPort,
  ingestId: string,
  codec: RecordCodec<T>,
  values: readonly T[],
): Promise<{ stored: T[]; duplicates: number }> {
  const owned = new Array<boolean>(values.length).fill(false);
  let duplicates = 0;
  await forEachLimited(values, PUT_ONCE_CONCURRENCY, async (value, i) => {
    const item = codec.encode(value);
    const { written } = await records.put(item, { condition: { kind: 'absent' } });
    if (written) {
      owned[i] = true;
      return;
    }
    const existing = codec.decodeIfPresent(await records.get(item.pk, item.sk));
    if (existing?.ingestId === ingestId) owned[i] = true;
    else duplicates++;
  });
  return { stored: values.filter((_, i) => owned[i]), duplicates };
}
