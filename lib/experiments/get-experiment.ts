/**
 * One experiment as a person or a notebook reads it: the record, its history (every change, oldest first) and the id
 * of its newest analysis (read that with the analyses route).
 *
 * @example
 * const { experiment, changes } = await getExperimentDetail(records, 'exp-1');
 */
import type { RecordsPort } from '../ports/records.ts';
import { getExperiment, listChanges } from './experiment-store.ts';
import type { ExperimentChange, ExperimentRecord } from './schemas.ts';

export interface ExperimentDetail {
  experiment: ExperimentRecord;
  changes: ExperimentChange[];
  lastAnalysisId?: string;
}

/**
 * The experiment with its changes; `NotFoundError` (404) for an unknown id.
 *
 * @example
 * const detail = await getExperimentDetail(records, 'exp-1'); // { experiment, changes: [{ change: 'created', … }], lastAnalysisId }
 */
export async function getExperimentDetail(records: RecordsPort, id: string): Promise<ExperimentDetail> {
  const [experiment, changes] = await Promise.all([getExperiment(records, id), listChanges(records, id)]);
  return { experiment, changes, ...(experiment.lastAnalysisId ? { lastAnalysisId: experiment.lastAnalysisId } : {}) };
}
