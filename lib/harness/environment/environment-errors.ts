/**
 * Failures of the environment builder. They are infrastructure errors (the task's dependencies could not be
 * installed, the cache could not be written), never the model's failure: an attempt that meets one is retried and
 * not scored. Match on the name, `Flywheel.EnvironmentBuildError`.
 */
import { FlywheelError } from '../../errors.ts';

/** The error name (without the `Flywheel.` prefix) of every environment build failure. */
export const ENVIRONMENT_BUILD_ERROR = 'EnvironmentBuildError';

export class EnvironmentBuildError extends FlywheelError {
  /** The tree's files the failing step was installing from (`requirements.txt`, `package-lock.json`). */
  readonly files: string[];
  /** The last lines of the build's output. */
  readonly outputTail: string;
  constructor(message: string, details: { files?: string[]; outputTail?: string } = {}, options?: ErrorOptions) {
    super(ENVIRONMENT_BUILD_ERROR, message, options);
    this.files = details.files ?? [];
    this.outputTail = details.outputTail ?? '';
  }
}

/** True for an environment build failure, whichever copy of this module threw it. */
export function isEnvironmentBuildError(error: unknown): error is EnvironmentBuildError {
  return (error as { name?: unknown })?.name === `Flywheel.${ENVIRONMENT_BUILD_ERROR}`;
}
