import type { RecordsPort } from '../ports/records.ts';
import type { HarnessMode } from '../harness/task/harness-mode.ts';
import { cellRecord, type CellRecord } from './record-codecs.ts';
import { sweepKeys } from './record-keys.ts';

/** Every cell row of a suite × mode over time, oldest first (index gsi2 `SUITERESULTS#<suite>#<mode>`). */
export async function listSuiteCells(records: RecordsPort, suite: string, mode: HarnessMode): Promise<CellRecord[]> {
  const out: CellRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await records.query({ index: 'gsi2', partition: sweepKeys.suiteResults(suite, mode), limit: 1000, ...(cursor ? { cursor } : {}) });
    out.push(...page.items.map(cellRecord.decode));
    cursor = page.cursor;
  } while (cursor);
  return out;
}

/** The cells of one sweep (its `RESULT#<id>` partition). */
export async function listSweepCells(records: RecordsPort, sweepId: string): Promise<CellRecord[]> {
  const out: CellRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await records.query({ partition: sweepKeys.resultPartition(sweepId), sort: { beginsWith: sweepKeys.cellPrefix }, limit: 1000, ...(cursor ? { cursor } : {}) });
    out.push(...page.items.map(cellRecord.decode));
    cursor = page.cursor;
  } while (cursor);
  return out;
}
