/**
 * The error both jobs drivers throw for an unknown job id (`Flywheel.JobNotFound`, `JOB_NOT_FOUND` in the jobs port),
 * so callers (the CLI, the sweep steps) handle it the same whichever driver runs.
 */
import { FlywheelError } from '../errors.ts';
import { JOB_NOT_FOUND } from '../ports/jobs.ts';

/** `describe`, `children`, `logs` or `cancel` of a job id that does not exist. */
export class JobNotFoundError extends FlywheelError {
  constructor(jobId: string) {
    super(JOB_NOT_FOUND, `no job ${jobId}`);
  }
}
