/**
 * The error names an infrastructure failure is recorded under (a stop reason's or an attempt try's `error`) when what
 * went wrong threw nothing that names itself: a reader of attempt records, a log query or a state machine matches
 * these, so they are spelled once here. They label a failure; no class is thrown under them.
 *
 * @example
 * stopReason = { kind: 'infrastructure-error', error: InfrastructureErrorNames.sandbox, message: `diff failed: ${detail}` };
 */
export const InfrastructureErrorNames = {
  /** The sandbox broke with an error that carries no Flywheel name (a command that could not run, `git diff` failing). */
  sandbox: 'Flywheel.SandboxError',
  /** The task's setup command exited non-zero: the task's environment, never the model. */
  setupFailed: 'Flywheel.SetupFailed',
  /** The agent loop said an infrastructure error stopped it without giving one. */
  infrastructure: 'Flywheel.InfrastructureError',
} as const;
