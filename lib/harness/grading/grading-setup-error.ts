import { FlywheelError } from '../../errors.ts';

/**
 * Grading could not be set up for reasons that are not the agent's: the base commit is missing, the task's test
 * patch does not apply to it. Callers record it as an infrastructure/task error, never as the model failing.
 */
export class GradingSetupError extends FlywheelError {
  constructor(message: string, options?: ErrorOptions) {
    super('GradingSetupError', message, options);
  }
}
