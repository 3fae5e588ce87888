import type { RecordsPort } from '../../../lib/ports/records.ts';
import { registryKeys } from '../../../lib/registry/record-keys.ts';

/** Marks a checkpoint retired in place (the registry has no retire route yet). */
export async function retireCheckpointForTest(records: RecordsPort, id: string): Promise<void> {
  const key = registryKeys.checkpoint(id);
  const item = await records.get(key.pk, key.sk);
  if (!item) throw new Error(`no checkpoint ${id}`);
  await records.put({ ...item, status: 'retired' });
}
