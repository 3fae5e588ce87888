/**
 * Exit codes of the rollout job (`batch-images/rollout/entrypoint.ts`), chosen so a job definition's retry strategy
 * and a sweep can tell the model failing a task (not a job failure at all: exit 0, the score says so) from the
 * infrastructure failing (retry) and from a bad shard spec (no retry will fix it).
 *
 * A Batch retry strategy to match: `evaluateOnExit: [{ onExitCode: '3', action: 'EXIT' }, { onReason: '*', action: 'RETRY' }]`.
 */
export const ROLLOUT_EXIT_CODES = {
  /** Every attempt of the shard was scored (passed or failed) or ungraded; results written. */
  completed: 0,
  /** Unexpected crash: the ports, the sandbox or the model server broke. Retry. */
  infrastructure: 1,
  /** Some attempts ended as infrastructure errors; the results so far are written. A retry resumes the rest. */
  incomplete: 2,
  /** The shard spec or the environment is wrong (missing variable, invalid task). A retry will not help. */
  badInput: 3,
} as const;

export type RolloutExitCode = (typeof ROLLOUT_EXIT_CODES)[keyof typeof ROLLOUT_EXIT_CODES];
