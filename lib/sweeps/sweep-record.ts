import { NotFoundError } from '../errors.ts';
import type { RecordsPort } from '../ports/records.ts';
import { sweepRecord } from './record-codecs.ts';
import { sweepKeys } from './record-keys.ts';
import type { SweepRecordBody } from './schemas.ts';

/** The sweep record, or undefined. */
export async function findSweep(records: RecordsPort, sweepId: string): Promise<SweepRecordBody | undefined> {
  const key = sweepKeys.sweep(sweepId);
  return sweepRecord.decodeIfPresent(await records.get(key.pk, key.sk));
}

/** The sweep record; `Flywheel.NotFoundError` when validate-sweep never ran for this id. */
export async function getSweep(records: RecordsPort, sweepId: string): Promise<SweepRecordBody> {
  const s = await findSweep(records, sweepId);
  if (!s) throw new NotFoundError(`No sweep ${sweepId}`);
  return s;
}

/** Overwrites the sweep record (every field, so a replay writes the same item). */
export async function putSweep(records: RecordsPort, body: SweepRecordBody): Promise<void> {
  await records.put(sweepRecord.encode(body));
}
