/**
 * The Retry policies of the sweep state machine, as named constants with their worst case spelled out. Every one
 * uses full jitter (`JitterStrategy: FULL`: each pause is drawn uniformly from 0 to the backoff value), so shards that
 * were throttled together do not come back together. The worst cases below are the sums of the backoff values (the
 * upper bound of the jittered pauses).
 */

import { ErrorNames } from '../../errors.ts';

export interface RetryPolicy {
  /** Seconds before the first retry. */
  intervalSeconds: number;
  backoffRate: number;
  /** Retries after the first try (Step Functions' MaxAttempts). */
  maxAttempts: number;
  /** Cap on one pause. */
  maxDelaySeconds: number;
}

/**
 * AWS Batch SubmitJob throttled (50 submissions per second per account) or briefly unavailable.
 * 5 s, backoff 2, 6 retries, capped at 120 s → worst case 5 + 10 + 20 + 40 + 80 + 120 (160 capped) = 275 s of pauses.
 * A fan-out of 100 concurrent shards spreads its resubmissions over that window instead of retrying in lockstep.
 */
export const BATCH_SUBMIT_RETRY: RetryPolicy = { intervalSeconds: 5, backoffRate: 2, maxAttempts: 6, maxDelaySeconds: 120 };

/** Step Functions' names for Batch API errors worth retrying (throttling, server side); a ClientException is not. */
export const BATCH_SUBMIT_ERRORS = ['Batch.AWSBatchException', 'Batch.ServerException', 'Batch.TooManyRequestsException'] as const;

/**
 * Batch refused the submission itself (an unknown queue or job definition, an invalid parameter or override): the
 * same request fails the same way again, so it is never retried. It needs a retrier of its own, ahead of the others
 * (`noRetry`), because `States.TaskFailed` in a retrier matches every error a Task raises except `States.Timeout`, on
 * Step Functions and in `aws-local-stepfunctions` alike, and Step Functions uses the first retrier that matches.
 */
export const BATCH_CLIENT_ERRORS = ['Batch.ClientException'] as const;

/**
 * The shard's array job failed (Step Functions reports `States.TaskFailed`), typically because the queue's RUNNABLE
 * time limit cancelled it for lack of GPU capacity, or a host was reclaimed. One retry after 60 s (jittered: 0–60 s)
 * → worst case 60 s of pause plus one more run. The rollout job resumes (finished attempts are skipped), so the second
 * run only does what the first did not finish; a shard that fails twice is caught and reported.
 */
export const BATCH_JOB_RETRY: RetryPolicy = { intervalSeconds: 60, backoffRate: 2, maxAttempts: 1, maxDelaySeconds: 60 };

/**
 * Lambda steps: service errors, throttling, and `Flywheel.TransientError` from a step (a store briefly unavailable).
 * 2 s, backoff 2, 4 retries → worst case 2 + 4 + 8 + 16 = 30 s of pauses.
 */
export const LAMBDA_STEP_RETRY: RetryPolicy = { intervalSeconds: 2, backoffRate: 2, maxAttempts: 4, maxDelaySeconds: 30 };

export const LAMBDA_STEP_ERRORS = [
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
  ErrorNames.transient,
] as const;

/** Worst-case total pause of a policy: the capped backoff values summed (what the comments above compute). */
export function worstCasePauseSeconds(policy: RetryPolicy): number {
  let total = 0;
  for (let i = 0; i < policy.maxAttempts; i++) {
    total += Math.min(policy.intervalSeconds * policy.backoffRate ** i, policy.maxDelaySeconds);
  }
  return total;
}

/** A retrier that matches `errors` and retries none of them (MaxAttempts 0): it shadows the retriers after it. */
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
