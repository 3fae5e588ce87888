/**
 * The training runs' use cases, in one place for their callers (the HTTP handlers, the CLI, the scheduled stall
 * check): start, read, list, stop, resume, curves, stall check.
 *
 * @example
 * const { run } = await startTrainingRun(ports, { base: 'tiny:0', dataset: { runs: ['eval-7'] } }, 'alice');
 * const lines = await readTrainingCurves(ports, run.runId);
 */
export { checkStalledRuns, type StallCheck } from './check-stalled-runs.ts';
export { EXPERIMENT_PROPOSED, TRAINING_RUN_FINISHED, TRAINING_RUN_STALLED, type ExperimentProposedDetail, type ProposalEvidence } from './events.ts';
export { readTrainingCurves } from './read-training-curves.ts';
export { getTrainingRun, listTrainingRuns } from './read-training-runs.ts';
export { resumeTrainingRun } from './resume-training-run.ts';
export { TrainingRunErrorNames } from './run-errors.ts';
export { policyJobName, trainingExecutionName } from './run-names.ts';
export { startTrainingRun } from './start-training-run.ts';
export { stopTrainingRun } from './stop-training-run.ts';
