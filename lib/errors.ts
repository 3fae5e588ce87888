/**
 * Namespaced error names, so a state machine's Retry/Catch and a log query can match on them
 * (`Flywheel.ValidationError`), as construct-hub does. Code in one process matches a class with `instanceof`; a
 * state machine, a log query or another process matches the name, spelled once in `ErrorNames` (or, for a
 * capability's own errors, in the names constant beside its classes).
 *
 * @example
 * retrier([ErrorNames.transient], LAMBDA_STEP_RETRY); // { ErrorEquals: ['Flywheel.TransientError'], … }
 */

import type { FieldIssue } from './shared/field-issues.ts';

/** The prefix of every Flywheel error name. */
export const ERROR_NAMESPACE = 'Flywheel';

/** The names of the general errors below, as a state machine's `ErrorEquals` and a log query spell them. */
export const ErrorNames = {
  validation: 'Flywheel.ValidationError',
  transient: 'Flywheel.TransientError',
  conflict: 'Flywheel.ConflictError',
  notFound: 'Flywheel.NotFoundError',
  configuration: 'Flywheel.ConfigurationError',
} as const;

export type ErrorName = (typeof ErrorNames)[keyof typeof ErrorNames];

export class FlywheelError extends Error {
  override readonly name: string;
  /** `name` is the short name (`ValidationError`) or the namespaced one (`Flywheel.ValidationError`, from a names constant). */
  constructor(name: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = name.startsWith(`${ERROR_NAMESPACE}.`) ? name : `${ERROR_NAMESPACE}.${name}`;
  }
}

/** Input that no retry will fix. */
export class ValidationError extends FlywheelError {
  readonly issues: ReadonlyArray<FieldIssue>;
  constructor(message: string, issues: ReadonlyArray<FieldIssue> = []) {
    super(ErrorNames.validation, message);
    this.issues = issues;
  }
}

/** A dependency (store, queue, model endpoint) failed in a way a retry may fix. */
export class TransientError extends FlywheelError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorNames.transient, message, options);
  }
}

/** The request lost a race with another writer (409): read again, then decide. */
export class ConflictError extends FlywheelError {
  constructor(message: string) {
    super(ErrorNames.conflict, message);
  }
}

/** Something referenced does not exist. */
export class NotFoundError extends FlywheelError {
  constructor(message: string) {
    super(ErrorNames.notFound, message);
  }
}

/** The deployment or process is set up wrongly (a missing variable, an unknown job definition): fix the setup, not the input. */
export class ConfigurationError extends FlywheelError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorNames.configuration, message, options);
  }
}
