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

/** The sandbox could not be set up: an infrastructure error, never the model's failure. */
export class SandboxSetupError extends FlywheelError {
  readonly audit?: HistoryAudit;
  constructor(message: string, audit?: HistoryAudit, options?: ErrorOptions) {
    super('SandboxSetupError', message, options);
    this.audit = audit;
  }
}

/** A command could not be started inside the sandbox (its cgroup or bubblewrap refused): an infrastructure error. */
export const SANDBOX_EXEC_ERROR = 'SandboxExecError';
