/**
 * The workflows port's errors: both workflows drivers throw them (`Flywheel.ExecutionAlreadyExists`,
 * `Flywheel.ExecutionNotFound`), so callers (the CLI, the start-sweep Lambda) handle them the same whichever driver
 * runs. They live beside the port, not under lib/drivers, so a use case may `instanceof` them.
 *
 * @example
 * try { await workflows.start('sweep', { name, input }); } catch (error) { if (!(error instanceof ExecutionAlreadyExistsError)) throw error; }
 */
import { FlywheelError } from '../errors.ts';

/** The names of the workflows port's errors, as a state machine's `ErrorEquals` and a log query spell them. */
export const WorkflowErrorNames = {
  executionAlreadyExists: 'Flywheel.ExecutionAlreadyExists',
  executionNotFound: 'Flywheel.ExecutionNotFound',
} as const;

/** A name already ran with another input (Step Functions' ExecutionAlreadyExists). */
export class ExecutionAlreadyExistsError extends FlywheelError {
  constructor(message: string) {
    super(WorkflowErrorNames.executionAlreadyExists, message);
  }
}

/** `describe` of an execution id that does not exist. */
export class ExecutionNotFoundError extends FlywheelError {
  constructor(executionId: string) {
    super(WorkflowErrorNames.executionNotFound, `no execution ${executionId}`);
  }
}
