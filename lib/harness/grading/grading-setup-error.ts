import { FlywheelError } from '../../errors.ts';

/** The names of grading's errors, as a log query (or a state machine) spells them. */
export const GradingErrorNames = {
  setup: 'Flywheel.GradingSetupError',
} as const;

/**
 * Grading could not be set up for reasons that are not the agent's: the base commit is missing, the task's test
 * patch does not apply to it. Callers record it as an infrastructure/task error, never as the model failing.
 */
export class GradingSetupError extends FlywheelError {
  constructor(message: string, options?: ErrorOptions) {
    super(GradingErrorNames.setup, message, options);
  }
}
