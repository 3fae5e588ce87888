/**
 * Namespaced error names, so a state machine's Retry/Catch and a log query can match on them
 * (`Flywheel.ValidationError`), as construct-hub does.
 */
export class FlywheelError extends Error {
  override readonly name: string;
  constructor(name: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = `Flywheel.${name}`;
  }
}

/** Input that no retry will fix. */
export class ValidationError extends FlywheelError {
  readonly issues: ReadonlyArray<{ path: string; message: string }>;
  constructor(message: string, issues: ReadonlyArray<{ path: string; message: string }> = []) {
    super('ValidationError', message);
    this.issues = issues;
  }
}

/** A dependency (store, queue, model endpoint) failed in a way a retry may fix. */
export class TransientError extends FlywheelError {
  constructor(message: string, options?: ErrorOptions) {
    super('TransientError', message, options);
  }
}

/** The request lost a race with another writer (409): read again, then decide. */
export class ConflictError extends FlywheelError {
  constructor(message: string) {
    super('ConflictError', message);
  }
}

/** Something referenced does not exist. */
export class NotFoundError extends FlywheelError {
  constructor(message: string) {
    super('NotFoundError', message);
  }
}

/** The deployment or process is set up wrongly (a missing variable, an unknown job definition): fix the setup, not the input. */
export class ConfigurationError extends FlywheelError {
  constructor(message: string, options?: ErrorOptions) {
    super('ConfigurationError', message, options);
  }
}
