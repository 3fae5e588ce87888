import { NotFoundError } from '../errors.ts';
import type { RecordsPort } from '../ports/records.ts';
import { registryKeys } from '../registry/record-keys.ts';
import type { SweepRecordBody } from './schemas.ts';

/** The sweep record, or undefined. */
export async function findSweep(records: RecordsPort, sweepId: string): Promise<SweepRecordBody | undefined> {
  const key = registryKeys.sweep(sweepId);
  const item = await records.get(key.pk, key.sk);
  if (!item) return undefined;
  const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g1s, ...body } = item;
  return body as unknown as SweepRecordBody;
}

/** The sweep record; `Flywheel.NotFoundError` when validate-sweep never ran for this id. */
export async function getSweep(records: RecordsPort, sweepId: string): Promise<SweepRecordBody> {
  const s = await findSweep(records, sweepId);
  if (!s) throw new NotFoundError(`No sweep ${sweepId}`);
  return s;
}

/** Overwrites the sweep record (every field, so a replay writes the same item). */
export async function putSweep(records: RecordsPort, body: SweepRecordBody): Promise<void> {
  await records.put({
    ...registryKeys.sweep(body.sweepId),
    gsi1pk: registryKeys.allSweeps,
    gsi1sk: registryKeys.sweepOrder(body.requestedAt, body.sweepId),
    ...body,
  });
}
