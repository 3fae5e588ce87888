import { NotFoundError } from '../errors.ts';
import type { RecordsPort } from '../ports/records.ts';
import { toSuite } from './record-views.ts';
import { registryKeys } from './record-keys.ts';
import type { Suite } from './schemas.ts';

export async function findSuite(records: RecordsPort, id: string): Promise<Suite | undefined> {
  const key = registryKeys.suite(id);
  const item = await records.get(key.pk, key.sk);
  return item ? toSuite(item) : undefined;
}

/** The suite; throws `Flywheel.NotFoundError` (404) when it is not registered. */
export async function getSuite(records: RecordsPort, id: string): Promise<Suite> {
  const s = await findSuite(records, id);
  if (!s) throw new NotFoundError(`No suite ${id}`);
  return s;
}
