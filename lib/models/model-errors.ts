import { FlywheelError } from '../errors.ts';

/** The names of the models port's errors, as a state machine's `ErrorEquals` and a log query spell them. */
export const ModelErrorNames = {
  unavailable: 'Flywheel.ModelUnavailable',
  request: 'Flywheel.ModelRequestError',
} as const;

/**
 * The model endpoint stayed down (429/5xx/network/timeouts after every retry). An infrastructure error:
 * the attempt is retried later and never scored as the model failing.
 */
export class ModelUnavailableError extends FlywheelError {
  readonly attempts: number;
  readonly lastStatus?: number;
  constructor(message: string, attempts: number, lastStatus?: number, options?: ErrorOptions) {
    super(ModelErrorNames.unavailable, message, options);
    this.attempts = attempts;
    if (lastStatus !== undefined) this.lastStatus = lastStatus;
  }
}

/** The endpoint rejected the request for good (400, 401, 403, 404, 422): no retry will fix it. */
export class ModelRequestError extends FlywheelError {
  readonly status?: number;
  constructor(message: string, status?: number) {
    super(ModelErrorNames.request, message);
    if (status !== undefined) this.status = status;
  }
}
