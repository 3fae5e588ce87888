/**
 * The names of the training workflow's Lambda steps (`train-steps.ts` runs them; `train.asl.ts` names them in each
 * Task's payload). A file of its own so the definition needs nothing of the steps' code.
 */
export const TRAIN_STEP_NAMES = [
  'build-dataset',
  'prepare-train',
  'register-checkpoint',
  'check-sweep',
  'compare-incumbent',
  'propose-experiment',
  'finish-run',
  'record-failure',
] as const;
export type TrainStepName = (typeof TRAIN_STEP_NAMES)[number];
