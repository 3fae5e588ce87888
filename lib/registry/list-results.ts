import type { Ports } from '../ports/ports.ts';
import { listAllSuites } from './list-suites.ts';
import { parseInput } from '../shared/parse-input.ts';
import { cellRecord, type CellRecord } from '../sweeps/record-codecs.ts';
import { sweepKeys } from '../sweeps/record-keys.ts';
import { toResult } from '../sweeps/record-views.ts';
import { ListResultsQuery, type Result } from './schemas.ts';
import { HARNESS_MODES } from '../harness/task/harness-mode.ts';

/**
 * `GET /v1/results?suite=&checkpoint=&mode=&sweep=`: result rows, oldest first (a time series).
 * - checkpoint + suite: the series of that pair (index gsi1 `RESULTSERIES#…`), per mode;
 * - suite alone: every checkpoint on the suite over time (gsi2 `SUITERESULTS#…`);
 * - sweep: the rows of one sweep; checkpoint alone: the checkpoint's rows over its sweeps on every suite.
 * Other given fields filter.
 *
 * @example
 * const { items } = await listResults(ports, { suite: 'forge-py', checkpoint: 'coder-7b:step-1200', mode: 'strict' });
 */
export async function listResults(ports: Pick<Ports, 'records'>, rawQuery: unknown): Promise<{ items: Result[] }> {
  const q = parseInput(ListResultsQuery, rawQuery, 'query string');
  const modes = q.mode ? [q.mode] : HARNESS_MODES;
  const items: CellRecord[] = [];
  const drain = async (index: 'table' | 'gsi1' | 'gsi2', partition: string, beginsWith?: string) => {
    let cursor: string | undefined;
    do {
      const page = await ports.records.query({ index, partition, ...(beginsWith ? { sort: { beginsWith } } : {}), limit: 1000, ...(cursor ? { cursor } : {}) });
      items.push(...page.items.map(cellRecord.decode));
      cursor = page.cursor;
    } while (cursor && items.length < 10_000);
  };
  if (q.sweep) {
    await drain('table', sweepKeys.resultPartition(q.sweep), sweepKeys.cellPrefix);
  } else if (q.suite && q.checkpoint) {
    for (const mode of modes) await drain('gsi1', sweepKeys.resultSeries(q.checkpoint, q.suite, mode));
  } else if (q.suite) {
    for (const mode of modes) await drain('gsi2', sweepKeys.suiteResults(q.suite, mode));
  } else {
    // Checkpoint alone: its series on every suite.
    for (const suite of await listAllSuites(ports)) for (const mode of modes) await drain('gsi1', sweepKeys.resultSeries(q.checkpoint!, suite.id, mode));
  }
  const rows = items
    .map(toResult)
    .filter((r) => (!q.suite || r.suite === q.suite) && (!q.checkpoint || r.checkpoint === q.checkpoint) && (!q.mode || r.mode === q.mode))
    .sort((a, b) => a.at.localeCompare(b.at) || a.checkpoint.localeCompare(b.checkpoint) || a.mode.localeCompare(b.mode));
  return { items: rows.slice(-q.limit) };
}
