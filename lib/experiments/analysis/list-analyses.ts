/**
 * An experiment's stored analyses, newest first (or oldest first for a chart over time).
 */
import type { RecordsPort } from '../../ports/records.ts';
import { experimentKeys } from '../record-keys.ts';
import type { ExperimentAnalysis } from '../schemas.ts';
import { analysisRecord } from './analysis-record.ts';

/** The most snapshots one call returns (a lift chart draws at most this many points). */
export const ANALYSES_LIST_MAX = 500;

/**
 * Newest first, at most `limit` (default 20, at most `ANALYSES_LIST_MAX`); `oldestFirst` reverses the order of the
 * page (the newest `limit`, in time order).
 *
 * @example
 * const [latest] = await listAnalyses(records, 'exp-1', { limit: 1 });
 */
export async function listAnalyses(records: RecordsPort, experimentId: string, options: { limit?: number; oldestFirst?: boolean } = {}): Promise<ExperimentAnalysis[]> {
  const limit = Math.max(1, Math.min(options.limit ?? 20, ANALYSES_LIST_MAX));
  const out: ExperimentAnalysis[] = [];
  let cursor: string | undefined;
  do {
    const page = await records.query({
      partition: experimentKeys.experiment(experimentId).pk,
      sort: { beginsWith: experimentKeys.analysisPrefix },
      descending: true,
      limit: limit - out.length,
      ...(cursor ? { cursor } : {}),
    });
    for (const item of page.items) out.push(analysisRecord.decode(item));
    cursor = page.cursor;
  } while (cursor && out.length < limit);
  return options.oldestFirst ? out.reverse() : out;
}
