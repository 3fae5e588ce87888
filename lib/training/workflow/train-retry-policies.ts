/**
 * The Retry policies of the training state machine (`train.asl.ts`), as named constants with their worst case spelled
 * out (the sums of the capped backoff values; every retrier uses full jitter, so runs throttled together do not come
 * back together).
 */
import { ErrorNames } from '../../errors.ts';
import { BATCH_CLIENT_ERRORS, BATCH_SUBMIT_ERRORS, LAMBDA_SERVICE_ERRORS, type RetryPolicy } from '../../shared/asl.ts';

/**
 * Lambda steps: service errors, throttling and `Flywheel.TransientError` (a store briefly unavailable).
 * 2 s, backoff 2, 4 retries, capped at 30 s → worst case 2 + 4 + 8 + 16 = 30 s of pauses.
 */
export const TRAIN_STEP_RETRY: RetryPolicy = { intervalSeconds: 2, backoffRate: 2, maxAttempts: 4, maxDelaySeconds: 30 };
export const TRAIN_STEP_ERRORS = [...LAMBDA_SERVICE_ERRORS, ErrorNames.transient] as const;

/**
 * The dataset build reads every selected rollout: a store that stays down a while is worth a longer wait.
 * 10 s, backoff 2, 5 retries, capped at 120 s → worst case 10 + 20 + 40 + 80 + 120 (160 capped) = 270 s.
 */
export const BUILD_DATASET_RETRY: RetryPolicy = { intervalSeconds: 10, backoffRate: 2, maxAttempts: 5, maxDelaySeconds: 120 };

/**
 * Batch SubmitJob throttled or briefly unavailable (several runs start together).
 * 5 s, backoff 2, 6 retries, capped at 120 s → worst case 5 + 10 + 20 + 40 + 80 + 120 (160 capped) = 275 s.
 */
export const POLICY_JOB_SUBMIT_RETRY: RetryPolicy = { intervalSeconds: 5, backoffRate: 2, maxAttempts: 6, maxDelaySeconds: 120 };
export const POLICY_JOB_SUBMIT_ERRORS = BATCH_SUBMIT_ERRORS;
/** A refused submission (unknown queue or job definition, a bad override) fails the same way again: never retried. */
export const POLICY_JOB_CLIENT_ERRORS = BATCH_CLIENT_ERRORS;

/**
 * The policy job's runs: one retry layer, Batch's (the trainer job definition's attempts with `evaluateOnExit`: exit 2,
 * bad input, exits at once; exit 1 or a reclaimed host runs again and resumes from the state blobs). The state machine
 * never retries `States.TaskFailed`: 1 ASL try × `POLICY_JOB_ATTEMPTS` Batch attempts = 3 runs at most, bad input 1.
 * Then RecordFailure tells people; `resumeTrainingRun` starts it again from its state.
 */
export const POLICY_JOB_ATTEMPTS = 3;
export const POLICY_JOB_TASK_FAILED_ERRORS = ['States.TaskFailed'] as const;
