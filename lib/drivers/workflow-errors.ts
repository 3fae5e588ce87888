/**
 * The errors both workflows drivers throw, by name (`Flywheel.ExecutionAlreadyExists`, `Flywheel.ExecutionNotFound`),
 * so callers (the CLI, the start-sweep Lambda) handle them the same whichever driver runs.
 */
import { FlywheelError } from '../errors.ts';

/** A name already ran with another input (Step Functions' ExecutionAlreadyExists). */
export class ExecutionAlreadyExistsError extends FlywheelError {
  constructor(message: string) {
    super('ExecutionAlreadyExists', message);
  }
}

/** `describe` of an execution id that does not exist. */
export class ExecutionNotFoundError extends FlywheelError {
  constructor(executionId: string) {
    super('ExecutionNotFound', `no execution ${executionId}`);
  }
}
