import type { Ports } from '../../ports/ports.ts';
import { trainingRunRecord } from '../record-codecs.ts';
import { trainingRunRecordKeys } from '../record-keys.ts';
import type { TrainingRun, TrainingRunStatus } from '../schemas.ts';
import { requireRun } from './run-store.ts';

/**
 * One training run; `Flywheel.NotFoundError` (404) when there is none.
 *
 * @example
 * const run = await getTrainingRun(ports, 'rl-42'); // run.status, run.step, run.checkpointId, run.proposal, …
 */
export async function getTrainingRun(ports: Pick<Ports, 'records'>, runId: string): Promise<TrainingRun> {
  return requireRun(ports, runId);
}

/**
 * Training runs, newest first, all or of one status (one page; `cursor` pages on).
 *
 * @example
 * const { items, cursor } = await listTrainingRuns(ports, { status: 'training', limit: 20 });
 */
export async function listTrainingRuns(
  ports: Pick<Ports, 'records'>,
  options: { status?: TrainingRunStatus; limit?: number; cursor?: string } = {},
): Promise<{ items: TrainingRun[]; cursor?: string }> {
  const page = await ports.records.query({
    ...(options.status ? { index: 'gsi2', partition: trainingRunRecordKeys.byStatus(options.status) } : { index: 'gsi1', partition: trainingRunRecordKeys.all }),
    descending: true,
    limit: options.limit ?? 50,
    ...(options.cursor ? { cursor: options.cursor } : {}),
  });
  return { items: page.items.map((i) => trainingRunRecord.decode(i)), ...(page.cursor ? { cursor: page.cursor } : {}) };
}
