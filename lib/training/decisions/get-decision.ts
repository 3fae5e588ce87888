/** One decision record by its id (`GET /v1/decisions/{decisionId}`): the lookup item names its attempt. */
import { NotFoundError } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import { decisionLookupRecord, decisionRecord } from '../record-codecs.ts';
import { decisionRecordKeys } from '../record-keys.ts';
import type { DecisionRecord } from '../schemas.ts';

/**
 * @example
 * const record = await getDecision(ports, 'dec-0123456789abcdef0123'); // NotFoundError when unknown
 */
export async function getDecision(ports: Pick<Ports, 'records'>, decisionId: string): Promise<DecisionRecord> {
  const l = decisionRecordKeys.lookup(decisionId);
  const lookup = decisionLookupRecord.decodeIfPresent(await ports.records.get(l.pk, l.sk));
  const key = lookup && decisionRecordKeys.decision(lookup.attemptId, decisionId);
  const record = key && decisionRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
  if (!record) throw new NotFoundError(`No decision record ${decisionId}`);
  return record;
}
