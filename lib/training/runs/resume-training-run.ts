import { ValidationError } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import type { WorkflowsPort } from '../../ports/workflows.ts';
import type { TrainingRun } from '../schemas.ts';
import { requireRun, SAME, updateRun } from './run-store.ts';
import { requireWorkflows, startRunExecution } from './start-training-run.ts';

/**
 * Starts a stopped or failed run again as a new execution, `<runId>-r<n>` for the n-th resume. Its steps find what
 * the run did (the dataset is kept), and the policy job continues from the trainer's last saved state (its state
 * blobs, `FLYWHEEL_STATE_KEY`). A run that is `queued` after a resume whose start was lost is started again (the same
 * name: idempotent); any other status is refused (`Flywheel.ValidationError` naming `status`).
 *
 * @example
 * const run = await resumeTrainingRun(ports, 'rl-42'); // run.status: 'queued', run.resumes: 1, run.executionId: …:rl-42-r1
 */
export async function resumeTrainingRun(ports: Pick<Ports, 'records' | 'now'> & { workflows?: WorkflowsPort | undefined }, runId: string): Promise<TrainingRun> {
  requireWorkflows(ports);
  let refused: string | undefined;
  const run = await updateRun(ports, runId, (r) => {
    refused = undefined;
    if (r.status === 'queued' && (r.resumes ?? 0) > 0) return SAME;
    if (r.status !== 'stopped' && r.status !== 'failed') {
      refused = r.status;
      return SAME;
    }
    const { error: _error, endedAt: _endedAt, stallNotifiedAt: _stall, stoppedBy: _by, ...rest } = r;
    return { ...rest, status: 'queued', resumes: (r.resumes ?? 0) + 1 };
  });
  if (refused) throw new ValidationError(`training run ${runId} is ${refused}: only a stopped or failed run resumes`, [{ path: 'status', message: `is ${refused}` }]);
  return startRunExecution(ports, await requireRun(ports, run.runId));
}
