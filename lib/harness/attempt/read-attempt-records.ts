/**
 * Reads attempt records back, decoded by their codec: a stored record that is not an attempt's shape throws
 * `MalformedRecordError` naming the record and the field, instead of a wrong value downstream.
 *
 * @example
 * const existing = await getAttemptRecord(ports.records, 'nightly-1', 'calc/add', 'strict', 0);
 * const all = await listAttemptRecords(ports.records, 'nightly-1');
 */
import type { RecordItem, RecordsPort } from '../../ports/records.ts';
import type { HarnessMode } from '../task/harness-mode.ts';
import type { AttemptRecord } from './attempt-record.ts';
import { attemptRecord } from './record-codecs.ts';
import { ATTEMPT_SORT_PREFIX, evalKeys, evalPartition } from './record-keys.ts';

/** The stored record of one attempt, if any. */
export async function getAttemptRecord(records: RecordsPort, runId: string, taskId: string, mode: HarnessMode, n: number): Promise<AttemptRecord | undefined> {
  const key = evalKeys.attempt(runId, taskId, mode, n);
  const item = await records.get(key.pk, key.sk);
  return item && decodeAttempt(item);
}

/** Every attempt record of a run (all pages). */
export async function listAttemptRecords(records: RecordsPort, runId: string): Promise<AttemptRecord[]> {
  const out: AttemptRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await records.query({ partition: evalPartition(runId), sort: { beginsWith: ATTEMPT_SORT_PREFIX }, limit: 1000, ...(cursor ? { cursor } : {}) });
    out.push(...page.items.map(decodeAttempt));
    cursor = page.cursor;
  } while (cursor);
  return out;
}

/** The record's fields, checked, with the keys it is stored under (readers have always seen them). */
function decodeAttempt(item: RecordItem): AttemptRecord {
  return { ...attemptRecord.decode(item), pk: item.pk, sk: item.sk };
}
