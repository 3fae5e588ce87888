/**
 * Stores a decision record: a conditional put on its deterministic id. A second extraction of the same decision finds
 * it and keeps it — unless the stored verdict came from another leakage checker or was checked against other secrets
 * (`leakage.checker`, `leakage.secretsDigest`): then the record is rewritten with the new verdict, keeping its
 * `createdAt` and the datasets that used it. Every rewrite is conditional on the `revision` it read. Then its lookup
 * item (id → attempt). `addDatasetToDecision` appends a dataset to a record's lineage the same way.
 */
import { ConflictError } from '../../errors.ts';
import type { RecordsPort } from '../../ports/records.ts';
import { decisionLookupRecord, decisionRecord } from '../record-codecs.ts';
import { decisionRecordKeys } from '../record-keys.ts';
import type { DecisionRecord } from '../schemas.ts';

/** Tries of a conditional rewrite that loses to a concurrent writer. */
const REWRITE_TRIES = 5;

/** Reads a decision record where it is stored (its attempt's partition). */
export async function readDecision(records: RecordsPort, attemptId: string, decisionId: string): Promise<DecisionRecord | undefined> {
  const key = decisionRecordKeys.decision(attemptId, decisionId);
  return decisionRecord.decodeIfPresent(await records.get(key.pk, key.sk));
}

/** Writes `next(stored)` over the stored record while its revision is the one read; undefined from `next`: no write. */
async function rewrite(records: RecordsPort, attemptId: string, decisionId: string, next: (stored: DecisionRecord) => DecisionRecord | undefined): Promise<DecisionRecord | undefined> {
  for (let i = 0; i < REWRITE_TRIES; i++) {
    const stored = await readDecision(records, attemptId, decisionId);
    if (!stored) return undefined;
    const value = next(stored);
    if (!value) return stored;
    const written = { ...value, revision: (stored.revision ?? 0) + 1 };
    const { written: ok } = await records.put(decisionRecord.encode(written), { condition: { kind: 'unchanged', field: 'revision', value: stored.revision } });
    if (ok) return written;
  }
  throw new ConflictError(`decision ${decisionId} kept changing under ${REWRITE_TRIES} rewrites`);
}

/**
 * @example
 * const { created, rewritten, stored } = await storeDecision(ports.records, record); // created false: it was stored before
 * stored.status; // the status now stored (a re-check may have changed it)
 */
export async function storeDecision(records: RecordsPort, record: DecisionRecord): Promise<{ created: boolean; rewritten: boolean; stored: DecisionRecord }> {
  const { written } = await records.put(decisionRecord.encode(record), { condition: { kind: 'absent' } });
  let stored: DecisionRecord = record;
  let rewritten = false;
  if (!written) {
    const after = await rewrite(records, record.trajectory.attemptId, record.decisionId, (old) => {
      if (old.leakage.checker === record.leakage.checker && old.leakage.secretsDigest === record.leakage.secretsDigest) return undefined;
      rewritten = true;
      return { ...record, lineage: { ...record.lineage, createdAt: old.lineage.createdAt, datasets: old.lineage.datasets } };
    });
    stored = after ?? record;
  }
  // Written every time: a crash between the two puts leaves a record the next extraction makes findable.
  await records.put(decisionLookupRecord.encode({ decisionId: record.decisionId, attemptId: record.trajectory.attemptId }));
  return { created: written, rewritten, stored };
}

/**
 * Appends a dataset to a decision record's `lineage.datasets` (once; a conditional rewrite).
 *
 * @example
 * await addDatasetToDecision(ports.records, 'run-1.calc__add.strict.0', 'dec-0123456789abcdef0123', 'calc-rl-1');
 */
export async function addDatasetToDecision(records: RecordsPort, attemptId: string, decisionId: string, datasetId: string): Promise<void> {
  await rewrite(records, attemptId, decisionId, (d) => (d.lineage.datasets.includes(datasetId) ? undefined : { ...d, lineage: { ...d.lineage, datasets: [...d.lineage.datasets, datasetId].sort() } }));
}
