/**
 * The training runs' own errors, each with a name a state machine's Catch or a log query matches
 * (`TrainingRunErrorNames`), beside the general ones of `lib/errors.ts`.
 *
 * @example
 * retrier([TrainingRunErrorNames.sweepPending], …); // never: a pending sweep is waited on, not retried
 */
import { FlywheelError } from '../../errors.ts';

export const TrainingRunErrorNames = {
  /** A step found its run stopped by a person: the execution ends (it was being stopped anyway). */
  stopped: 'Flywheel.TrainingRunStopped',
  /** The trainer ended without a checkpoint folder (no `config.json` under the output prefix). */
  outputMissing: 'Flywheel.TrainingOutputMissing',
  /** The checkpoint's sweep did not end within the wait allowed. */
  sweepWaitExceeded: 'Flywheel.SweepWaitExceeded',
  /** The scheduled check found the run non-terminal with no running execution (`checkStalledRuns`). */
  orphaned: 'Flywheel.TrainingRunOrphaned',
  /** The execution's own end after RecordFailure (the run is `failed`, people were told). */
  runFailed: 'Flywheel.TrainingRunFailed',
} as const;

/** The run was stopped while a step ran. */
export class TrainingRunStoppedError extends FlywheelError {
  constructor(runId: string) {
    super(TrainingRunErrorNames.stopped, `training run ${runId} was stopped`);
  }
}

export class TrainingOutputMissingError extends FlywheelError {
  constructor(message: string) {
    super(TrainingRunErrorNames.outputMissing, message);
  }
}

export class SweepWaitExceededError extends FlywheelError {
  constructor(message: string) {
    super(TrainingRunErrorNames.sweepWaitExceeded, message);
  }
}
