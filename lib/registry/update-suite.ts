/**
 * Changes a suite record with optimistic concurrency: read it, let `change` decide on what was read, write only over
 * that very item (the record's `revision`, a fresh random id on every write that the `Suite` view hides, must be unchanged),
 * else read again and decide again. Random, not a counter: `registerSuite` writes a new version whole, and a counter
 * restarting there could match a stale reader's number; an id never repeats. So a sweep marking a suite saturated and a person retiring it at the same moment never undo each
 * other: the loser sees the winner's write and decides on it (`check-saturation` leaves a retired suite alone).
 *
 * @example
 * await updateSuite(records, 'forge-py', (current) => (current.status === 'retired' ? undefined : { ...current, best }));
 */
import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError } from '../errors.ts';
import type { RecordsPort } from '../ports/records.ts';
import { suiteRecord } from './record-codecs.ts';
import { registryKeys } from './record-keys.ts';
import type { Suite } from './schemas.ts';

/** Reads and decides again this often when others keep writing; five lost races in a row is contention, not luck. */
const UPDATE_TRIES = 5;

/** The written suite, or undefined when `change` decided to leave it as it is. */
export async function updateSuite(records: RecordsPort, id: string, change: (current: Suite) => Suite | undefined): Promise<Suite | undefined> {
  const key = registryKeys.suite(id);
  for (let attempt = 1; attempt <= UPDATE_TRIES; attempt++) {
    const stored = suiteRecord.decodeIfPresent(await records.get(key.pk, key.sk));
    if (!stored) throw new NotFoundError(`No suite ${id}`);
    const { kind: _kind, revision, ...current } = stored;
    const next = change(current);
    if (!next) return undefined;
    const { written } = await records.put(
      suiteRecord.encode({ ...next, kind: 'suite', revision: randomUUID() }),
      { condition: { kind: 'unchanged', field: 'revision', value: revision } },
    );
    if (written) return next;
  }
  throw new ConflictError(`suite ${id} kept changing under this write (${UPDATE_TRIES} tries); retry`);
}
