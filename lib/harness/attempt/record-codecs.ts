/**
 * The attempt record's codec (keys in `record-keys.ts`; the run's own records are in `../eval/record-codecs.ts`): writers store `codec.encode(value)`, readers
 * take `codec.decode(item)`, so a record is checked where it is written and typed where it is read, and a malformed
 * one fails there as `MalformedRecordError` naming the record and the field.
 *
 * @example
 * await records.put(attemptRecord.encode(record));
 * const stored = attemptRecord.decodeIfPresent(await records.get(key.pk, key.sk));
 */
import { defineRecordCodec } from '../../shared/record-codec.ts';
import { AttemptRecordSchema } from './attempt-record.ts';
import { evalKeys } from './record-keys.ts';

export const attemptRecord = defineRecordCodec({
  kind: 'eval attempt',
  schema: AttemptRecordSchema,
  keys: (a) => evalKeys.attempt(a.runId, a.taskId, a.mode, a.n),
});
