import { NotFoundError } from '../errors.ts';
import type { RecordsPort } from '../ports/records.ts';
import { toCheckpoint } from './record-views.ts';
import { registryKeys } from './record-keys.ts';
import type { Checkpoint } from './schemas.ts';

/** The checkpoint, or undefined. */
export async function findCheckpoint(records: RecordsPort, id: string): Promise<Checkpoint | undefined> {
  const key = registryKeys.checkpoint(id);
  const item = await records.get(key.pk, key.sk);
  return item ? toCheckpoint(item) : undefined;
}

/** The checkpoint; throws `Flywheel.NotFoundError` (404) when it is not registered. */
export async function getCheckpoint(records: RecordsPort, id: string): Promise<Checkpoint> {
  const c = await findCheckpoint(records, id);
  if (!c) throw new NotFoundError(`No checkpoint ${id}`);
  return c;
}
