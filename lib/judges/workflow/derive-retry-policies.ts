/**
 * The Retry policies of the judge derivation state machine, as named constants with their worst case spelled out
 * (the sums of the backoff values; every retrier uses full jitter, as the sweep's do).
 */
import { ErrorNames } from '../../errors.ts';

export interface RetryPolicy {
  intervalSeconds: number;
  backoffRate: number;
  /** Retries after the first try (Step Functions' MaxAttempts). */
  maxAttempts: number;
  maxDelaySeconds: number;
}

/**
 * Lambda steps: service errors, throttling, `Flywheel.TransientError` (a store briefly unavailable) and a judge
 * endpoint that stayed down through the models port's own retries (`Flywheel.ModelUnavailable`).
 * 5 s, backoff 2, 3 retries → worst case 5 + 10 + 20 = 35 s of pauses.
 */
export const DERIVE_STEP_RETRY: RetryPolicy = { intervalSeconds: 5, backoffRate: 2, maxAttempts: 3, maxDelaySeconds: 60 };

export const DERIVE_STEP_ERRORS = [
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
  ErrorNames.transient,
  'Flywheel.ModelUnavailable',
] as const;

/** Batch SubmitJob throttled or briefly unavailable: 5 s, backoff 2, 5 retries, capped at 60 s → 5+10+20+40+60 = 135 s. */
export const TRAINER_SUBMIT_RETRY: RetryPolicy = { intervalSeconds: 5, backoffRate: 2, maxAttempts: 5, maxDelaySeconds: 60 };
export const TRAINER_SUBMIT_ERRORS = ['Batch.AWSBatchException', 'Batch.ServerException', 'Batch.TooManyRequestsException'] as const;
/** A refused submission (unknown queue or definition) fails the same way again: never retried. */
export const TRAINER_CLIENT_ERRORS = ['Batch.ClientException'] as const;
/** The trainer job failed (a host reclaimed, the RUNNABLE limit): once more after 30 s → 30 s of pause and one more run. */
export const TRAINER_JOB_RETRY: RetryPolicy = { intervalSeconds: 30, backoffRate: 2, maxAttempts: 1, maxDelaySeconds: 30 };

/** Worst-case total pause of a policy: the capped backoff values summed. */
export function worstCasePauseSeconds(policy: RetryPolicy): number {
  let total = 0;
  for (let i = 0; i < policy.maxAttempts; i++) total += Math.min(policy.intervalSeconds * policy.backoffRate ** i, policy.maxDelaySeconds);
  return total;
}

/** A retrier that matches `errors` and retries none of them: it shadows the retriers after it (first match wins). */
export function noRetry(errors: readonly string[]): { [field: string]: number | string[] } {
  return { ErrorEquals: [...errors], MaxAttempts: 0 };
}

/** The ASL retrier for a policy (full jitter). */
export function retrier(errors: readonly string[], policy: RetryPolicy): { [field: string]: string | number | string[] } {
  return {
    ErrorEquals: [...errors],
    IntervalSeconds: policy.intervalSeconds,
    BackoffRate: policy.backoffRate,
    MaxAttempts: policy.maxAttempts,
    MaxDelaySeconds: policy.maxDelaySeconds,
    JitterStrategy: 'FULL',
  };
}
