/**
 * An attempt named by a subject (`{ runId, attemptId }`): the attempt id is its record's sort key
 * (`ATTEMPT#<taskId>#<mode>#<n>`), that key without its prefix, or the attempt's own `attemptId` field
 * (`<runId>.<task>.<mode>.<n>`). The first two are one read each; the last lists the run's attempts.
 */
import type { RecordsPort } from '../../ports/records.ts';
import type { AttemptRecord } from '../../harness/attempt/attempt-record.ts';
import { listAttemptRecords } from '../../harness/attempt/read-attempt-records.ts';
import { attemptRecord } from '../../harness/attempt/record-codecs.ts';
import { ATTEMPT_SORT_PREFIX, evalPartition } from '../../harness/attempt/record-keys.ts';

/**
 * @example
 * const attempt = await getAttemptRecordByKey(records, 'nightly-1', 'ATTEMPT#calc/add#strict#0');
 */
export async function getAttemptRecordByKey(records: RecordsPort, runId: string, attemptId: string): Promise<AttemptRecord | undefined> {
  const pk = evalPartition(runId);
  const sk = attemptId.startsWith(ATTEMPT_SORT_PREFIX) ? attemptId : `${ATTEMPT_SORT_PREFIX}${attemptId}`;
  const item = await records.get(pk, sk);
  if (item) return { ...attemptRecord.decode(item), pk, sk };
  if (attemptId.startsWith(ATTEMPT_SORT_PREFIX)) return undefined;
  return (await listAttemptRecords(records, runId)).find((a) => a.attemptId === attemptId);
}
