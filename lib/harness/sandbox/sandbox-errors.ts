/**
 * The sandbox's infrastructure errors, apart from any one step so the provider, the session and the command runner
 * raise the same ones: a caller tells "the sandbox broke" from "the model's command failed" by these alone.
 *
 * @example
 * try {
 *   await provider.open(spec);
 * } catch (error) {
 *   if (error instanceof SandboxSetupError) markInfrastructureFailure(error.audit);
 * }
 */
import { FlywheelError } from '../../errors.ts';
import type { HistoryAudit } from '../git/audit-history.ts';

/** The names of the sandbox's errors, as a log query (or a state machine) spells them. */
export const SandboxErrorNames = {
  setup: 'Flywheel.SandboxSetupError',
  exec: 'Flywheel.SandboxExecError',
  closed: 'Flywheel.SandboxClosed',
  diff: 'Flywheel.SandboxDiffError',
  cgroup: 'Flywheel.SandboxCgroupError',
} as const;

/** The sandbox could not be set up: an infrastructure error, never the model's failure. */
export class SandboxSetupError extends FlywheelError {
  readonly audit?: HistoryAudit;
  constructor(message: string, audit?: HistoryAudit, options?: ErrorOptions) {
    super(SandboxErrorNames.setup, message, options);
    this.audit = audit;
  }
}

/** A command could not be started inside the sandbox (its cgroup or bubblewrap refused): an infrastructure error. */
export class SandboxExecError extends FlywheelError {
  constructor(message: string) {
    super(SandboxErrorNames.exec, message);
  }
}

/** The session was used after `close` (or before it started, or without a workspace): a caller's bug. */
export class SandboxClosedError extends FlywheelError {
  constructor(message: string) {
    super(SandboxErrorNames.closed, message);
  }
}

/** `git diff` of the workspace failed inside the sandbox: an infrastructure error, never the model's failure. */
export class SandboxDiffError extends FlywheelError {
  constructor(message: string) {
    super(SandboxErrorNames.diff, message);
  }
}
