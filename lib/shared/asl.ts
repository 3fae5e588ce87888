/**
 * What every state machine definition shares: the JSON types of an ASL document, and the Retry policies' parts: the policy's shape, its worst-case pause, the ASL retrier (full
 * jitter: each pause is drawn uniformly from 0 to the backoff value, so branches throttled together do not come back
 * together) and a retrier that retries nothing, and the Step Functions error names of the Batch and Lambda services.
 * Each state machine names its own policies beside its definition (`lib/sweeps/workflow/retry-policies.ts`,
 * `lib/judges/workflow/derive-retry-policies.ts`), with their arithmetic spelled out.
 *
 * @example
 * const STEP_RETRY: RetryPolicy = { intervalSeconds: 2, backoffRate: 2, maxAttempts: 4, maxDelaySeconds: 30 };
 * worstCasePauseSeconds(STEP_RETRY); // 2 + 4 + 8 + 16 = 30
 * state.Retry = [noRetry(BATCH_CLIENT_ERRORS), retrier(LAMBDA_SERVICE_ERRORS, STEP_RETRY)];
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type AslState = { [key: string]: Json };
export interface AslDefinition {
  Comment?: string;
  StartAt: string;
  States: Record<string, AslState>;
  TimeoutSeconds?: number;
  [key: string]: Json | undefined;
}

export interface RetryPolicy {
  /** Seconds before the first retry. */
  intervalSeconds: number;
  backoffRate: number;
  /** Retries after the first try (Step Functions' MaxAttempts). */
  maxAttempts: number;
  /** Cap on one pause. */
  maxDelaySeconds: number;
}

/** Step Functions' names for Batch API errors worth retrying (throttling, server side); a ClientException is not. */
export const BATCH_SUBMIT_ERRORS = ['Batch.AWSBatchException', 'Batch.ServerException', 'Batch.TooManyRequestsException'] as const;

/**
 * Batch refused the submission itself (an unknown queue or job definition, an invalid parameter or override): the
 * same request fails the same way again, so it is never retried. It needs a retrier of its own, ahead of the others
 * (`noRetry`), because `States.TaskFailed` in a retrier matches every error a Task raises except `States.Timeout`, on
 * Step Functions and in `aws-local-stepfunctions` alike, and Step Functions uses the first retrier that matches.
 */
export const BATCH_CLIENT_ERRORS = ['Batch.ClientException'] as const;

/** Step Functions' names for a Lambda invocation's service errors and throttling. */
export const LAMBDA_SERVICE_ERRORS = ['Lambda.ServiceException', 'Lambda.AWSLambdaException', 'Lambda.SdkClientException', 'Lambda.TooManyRequestsException'] as const;

/** Worst-case total pause of a policy: the capped backoff values summed. */
export function worstCasePauseSeconds(policy: RetryPolicy): number {
  let total = 0;
  for (let i = 0; i < policy.maxAttempts; i++) total += Math.min(policy.intervalSeconds * policy.backoffRate ** i, policy.maxDelaySeconds);
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
