/**
 * The jobs port's error: both jobs drivers throw it for an unknown job id (`Flywheel.JobNotFound`, `JOB_NOT_FOUND` in
 * the jobs port), so callers (the CLI, the sweep steps) handle it the same whichever driver runs. It lives beside the
 * port, not under lib/drivers, so a use case may `instanceof` it.
 *
 * @example
 * try { await jobs.describe(jobId); } catch (error) { if (error instanceof JobNotFoundError) return undefined; throw error; }
 */
import { FlywheelError } from '../errors.ts';
import { JOB_NOT_FOUND } from './jobs.ts';

/** `describe`, `children`, `logs` or `cancel` of a job id that does not exist. */
export class JobNotFoundError extends FlywheelError {
  constructor(jobId: string) {
    super(JOB_NOT_FOUND, `no job ${jobId}`);
  }
}
