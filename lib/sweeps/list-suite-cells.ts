import type { RecordsPort } from '../ports/records.ts';
import type { CellItem } from '../registry/record-views.ts';
import { registryKeys } from '../registry/record-keys.ts';
import type { SweepMode } from '../registry/schemas.ts';

/** Every cell row of a suite × mode over time, oldest first (index gsi2 `SUITERESULTS#<suite>#<mode>`). */
export async function listSuiteCells(records: RecordsPort, suite: string, mode: SweepMode): Promise<CellItem[]> {
  const out: CellItem[] = [];
  let cursor: string | undefined;
  do {
    const page = await records.query({ index: 'gsi2', partition: registryKeys.suiteResults(suite, mode), limit: 1000, ...(cursor ? { cursor } : {}) });
    out.push(...(page.items as CellItem[]));
    cursor = page.cursor;
  } while (cursor);
  return out;
}

/** The cells of one sweep (its `RESULT#<id>` partition). */
export async function listSweepCells(records: RecordsPort, sweepId: string): Promise<CellItem[]> {
  const out: CellItem[] = [];
  let cursor: string | undefined;
  do {
    const page = await records.query({ partition: registryKeys.resultPartition(sweepId), sort: { beginsWith: registryKeys.cellPrefix }, limit: 1000, ...(cursor ? { cursor } : {}) });
    out.push(...(page.items as CellItem[]));
    cursor = page.cursor;
  } while (cursor);
  return out;
}
