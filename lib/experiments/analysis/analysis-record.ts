/**
 * The stored analysis snapshot (`EXPERIMENT#<id>` / `ANALYSIS#<at>#<analysisId>`): one per run, newest last in sort
 * order, so an experiment's snapshots read back in time order (the lift charts) or newest first (the API).
 *
 * @example
 * await records.put(analysisRecord.encode(analysis));
 * const a = analysisRecord.decode(item);
 */
import { defineRecordCodec } from '../../shared/record-codec.ts';
import { experimentKeys } from '../record-keys.ts';
import { ExperimentAnalysisSchema } from '../schemas.ts';

export const analysisRecord = defineRecordCodec({
  kind: 'experiment analysis',
  schema: ExperimentAnalysisSchema,
  keys: (a) => experimentKeys.analysis(a.experimentId, a.at, a.analysisId),
});
