/**
 * Registry records ⇄ API views: the stored items carry bookkeeping (`kind`, a suite's `revision`) that the API does
 * not show. Items are decoded by their codecs (`record-codecs.ts`), so a malformed one fails here, naming the field.
 */
import type { RecordItem } from '../ports/records.ts';
import { checkpointRecord, suiteRecord } from './record-codecs.ts';
import type { Checkpoint, Suite } from './schemas.ts';

export function toCheckpoint(item: RecordItem): Checkpoint {
  const { kind: _kind, ...checkpoint } = checkpointRecord.decode(item);
  return checkpoint;
}

/** The suite; its write counter (`revision`, `updateSuite`'s) stays inside the record. */
export function toSuite(item: RecordItem): Suite {
  const { kind: _kind, revision: _revision, ...suite } = suiteRecord.decode(item);
  return suite;
}

/** The suite without its task ids (a suite may hold 100,000). */
export function suiteView(suite: Suite): Omit<Suite, 'taskIds'> {
  const { taskIds: _ids, ...view } = suite;
  return view;
}
