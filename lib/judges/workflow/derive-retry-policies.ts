/**
 * The Retry policies of the judge derivation state machine, as named constants with their worst case spelled out
 * (the sums of the backoff values; every retrier uses full jitter, as the sweep's do).
 */
import { ErrorNames } from '../../errors.ts';
import { ModelErrorNames } from '../../models/model-errors.ts';
import { BATCH_CLIENT_ERRORS, BATCH_SUBMIT_ERRORS, LAMBDA_SERVICE_ERRORS, type RetryPolicy } from '../../shared/asl.ts';


/**
 * Lambda steps: service errors, throttling, `Flywheel.TransientError` (a store briefly unavailable) and a judge
 * endpoint that stayed down through the models port's own retries (`Flywheel.ModelUnavailable`).
 * 5 s, backoff 2, 3 retries → worst case 5 + 10 + 20 = 35 s of pauses.
 */
export const DERIVE_STEP_RETRY: RetryPolicy = { intervalSeconds: 5, backoffRate: 2, maxAttempts: 3, maxDelaySeconds: 60 };

export const DERIVE_STEP_ERRORS = [...LAMBDA_SERVICE_ERRORS, ErrorNames.transient, ModelErrorNames.unavailable] as const;

/** Batch SubmitJob throttled or briefly unavailable: 5 s, backoff 2, 5 retries, capped at 60 s → 5+10+20+40+60 = 135 s. */
export const TRAINER_SUBMIT_RETRY: RetryPolicy = { intervalSeconds: 5, backoffRate: 2, maxAttempts: 5, maxDelaySeconds: 60 };
export const TRAINER_SUBMIT_ERRORS = BATCH_SUBMIT_ERRORS;
/** A refused submission (unknown queue or definition) fails the same way again: never retried. */
export const TRAINER_CLIENT_ERRORS = BATCH_CLIENT_ERRORS;
/**
 * The trainer job's runs: one retry layer, Batch's. The job definition has `attempts: 2` and exits at once on the
 * trainer's bad-input code (2: bad teacher data, which no retry fixes); a host reclaimed, a network or disk error
 * (exit 1) runs once more. The state machine does not retry `States.TaskFailed` (it could not tell bad input from the
 * rest, and 2 ASL tries × 2 Batch attempts made 4 runs): worst case 1 × 2 = 2 runs, bad input 1 run, then the
 * iteration's Catch records the failure.
 */
export const TRAINER_JOB_ATTEMPTS = 2;
/** ASL tries of the trainer job (`.sync` failed → `States.TaskFailed`): one, never retried. */
export const TRAINER_TASK_FAILED_ERRORS = ['States.TaskFailed'] as const;
