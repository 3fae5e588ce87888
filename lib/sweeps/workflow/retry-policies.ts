/**
 * The Retry policies of the sweep state machine, as named constants with their worst case spelled out. Every one
 * uses full jitter (`JitterStrategy: FULL`: each pause is drawn uniformly from 0 to the backoff value), so shards that
 * were throttled together do not come back together. The worst cases below are the sums of the backoff values (the
 * upper bound of the jittered pauses).
 */

import { ErrorNames } from '../../errors.ts';
import { LAMBDA_SERVICE_ERRORS, type RetryPolicy } from '../../shared/asl.ts';


/**
 * AWS Batch SubmitJob throttled (50 submissions per second per account) or briefly unavailable.
 * 5 s, backoff 2, 6 retries, capped at 120 s → worst case 5 + 10 + 20 + 40 + 80 + 120 (160 capped) = 275 s of pauses.
 * A fan-out of 100 concurrent shards spreads its resubmissions over that window instead of retrying in lockstep.
 */
export const BATCH_SUBMIT_RETRY: RetryPolicy = { intervalSeconds: 5, backoffRate: 2, maxAttempts: 6, maxDelaySeconds: 120 };


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

export const LAMBDA_STEP_ERRORS = [...LAMBDA_SERVICE_ERRORS, ErrorNames.transient] as const;
