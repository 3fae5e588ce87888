import { isDeepStrictEqual } from 'node:util';
import { ConfigurationError, ValidationError } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import type { WorkflowsPort } from '../../ports/workflows.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { TERMINAL_TRAINING_RUN_STATUSES, TrainingRunInputSchema, type TrainingRun } from '../schemas.ts';
import { TRAIN_WORKFLOW } from '../workflow/train.asl.ts';
import { findCheckpoint } from '../../registry/get-checkpoint.ts';
import { resolveBase } from './resolve-base.ts';
import { derivedRunId, RESUME_SUFFIX, RUN_ID, trainingExecutionName } from './run-names.ts';
import { createRun, requireRun, SAME, updateRun } from './run-store.ts';

/** The workflows port, or a `Flywheel.ConfigurationError` saying where it comes from. */
export function requireWorkflows(ports: { workflows?: WorkflowsPort | undefined }): WorkflowsPort {
  if (!ports.workflows) throw new ConfigurationError('no workflows port here: training runs start from the API (the local runtime, `npm start`, or the deployed stack)');
  return ports.workflows;
}

/**
 * Starts (or, run again, continues) the run's current execution: `<runId>` at first, `<runId>-r<n>` after the n-th
 * resume. Starting a name that runs returns it (the port's idempotency); the run record keeps its id.
 */
export async function startRunExecution(ports: Pick<Ports, 'records' | 'now'> & { workflows?: WorkflowsPort | undefined }, run: TrainingRun): Promise<TrainingRun> {
  const workflows = requireWorkflows(ports);
  const resumes = run.resumes ?? 0;
  const { executionId } = await workflows.start(TRAIN_WORKFLOW, {
    name: trainingExecutionName(run.runId, resumes),
    input: resumes > 0 ? { runId: run.runId, resume: resumes } : { runId: run.runId },
  });
  return updateRun(ports, run.runId, (r) => (r.executionId === executionId ? SAME : { ...r, executionId }));
}

/**
 * Starts a training run: validates the request (`TrainingRunInputSchema`; `Flywheel.ValidationError` naming each
 * field; a dataset that selects nothing, a run id that is not `RUN_ID` or ends like a resume `-r<n>`, a checkpoint id
 * already registered by another run, each named), checks the base (`tiny:<seed>`, or a registered active checkpoint
 * with an `artifactKey`, resolved once and kept on the run as `resolvedBase`), stores the run
 * (`queued`) and starts its workflow execution (`train-policy`). Idempotent on the run id: the same request again
 * answers the stored run with `created: false` (and starts its execution if a crash left it unstarted); the same id
 * with another request is refused. Without a `runId` one is derived from the request, so a client's retry is one run.
 *
 * @example
 * const { run, created } = await startTrainingRun(ports, { base: 'tiny:0', dataset: { runs: ['eval-7'] }, trainer: { steps: 50 } }, 'alice');
 * // run.status: 'queued'; run.executionId: the execution running it
 */
export async function startTrainingRun(
  ports: Pick<Ports, 'records' | 'workflows' | 'now'>,
  input: unknown,
  actor?: string,
): Promise<{ run: TrainingRun; created: boolean }> {
  const parsed = parseInput(TrainingRunInputSchema, input, 'training run');
  const { runs, sweeps, feedback } = parsed.dataset;
  if (runs.length === 0 && sweeps.length === 0 && !feedback) {
    throw new ValidationError('Invalid training run: the dataset selects nothing (give runs, sweeps or feedback)', [{ path: 'dataset', message: 'select runs, sweeps or feedback' }]);
  }
  if (parsed.runId !== undefined) {
    if (!RUN_ID.test(parsed.runId)) throw new ValidationError(`Invalid training run: runId ${parsed.runId}`, [{ path: 'runId', message: 'letters, digits, . _ - (no /), at most 72, starting with a letter or digit' }]);
    // `<runId>-r<n>` names the n-th resume's execution: a run named so would collide with another run's resume.
    if (RESUME_SUFFIX.test(parsed.runId)) throw new ValidationError(`Invalid training run: runId ${parsed.runId} ends like a resume (-r<n>)`, [{ path: 'runId', message: 'must not end in -r<digits>' }]);
  }
  const resolvedBase = await resolveBase(ports, parsed.base);
  requireWorkflows(ports);
  const { runId: given, ...rest } = parsed;
  const runId = given ?? derivedRunId(rest, parsed.base);
  const request = { ...parsed, runId };
  // The checkpoint it would register must be free (or this run's own: a retry after it registered).
  const checkpointId = parsed.checkpointId ?? `${resolvedBase.model}:${runId}`;
  const taken = await findCheckpoint(ports.records, checkpointId);
  if (taken && taken.trainingRun !== runId) {
    throw new ValidationError(`Invalid training run: checkpoint ${checkpointId} is already registered`, [{ path: 'checkpointId', message: 'already registered: pick another checkpointId' }]);
  }
  const now = ports.now().toISOString();
  // The base as resolved now: a base checkpoint retired later does not break this run's training or registration.
  const run: TrainingRun = { runId, request, status: 'queued', createdAt: now, updatedAt: now, ...(actor ? { createdBy: actor } : {}), resumes: 0, resolvedBase };
  if (await createRun(ports, run)) return { run: await startRunExecution(ports, { ...run, revision: 0 }), created: true };
  const stored = await requireRun(ports, runId);
  if (!isDeepStrictEqual(stored.request, request)) {
    throw new ValidationError(`Invalid training run: ${runId} already exists with another request (pick another runId)`, [{ path: 'runId', message: 'already used by another request' }]);
  }
  // An ended run is answered as it is: running it again is `resumeTrainingRun`'s, not a retry's.
  if (TERMINAL_TRAINING_RUN_STATUSES.includes(stored.status)) return { run: stored, created: false };
  return { run: await startRunExecution(ports, stored), created: false };
}
