/**
 * Stores a decision record once: a conditional put on its deterministic id (a second extraction of the same decision
 * finds it and keeps the first, its `createdAt` included), then its lookup item (id → attempt).
 */
import type { RecordsPort } from '../../ports/records.ts';
import { decisionLookupRecord, decisionRecord } from '../record-codecs.ts';
import type { DecisionRecord } from '../schemas.ts';

/**
 * @example
 * const { created } = await storeDecision(ports.records, record); // false: it was stored before
 */
export async function storeDecision(records: RecordsPort, record: DecisionRecord): Promise<{ created: boolean }> {
  const { written } = await records.put(decisionRecord.encode(record), { condition: { kind: 'absent' } });
  // Written every time: a crash between the two puts leaves a record the next extraction makes findable.
  await records.put(decisionLookupRecord.encode({ decisionId: record.decisionId, attemptId: record.trajectory.attemptId }));
  return { created: written };
}
