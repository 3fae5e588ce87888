/**
 * One attempt of a leaf job: the process its definition names, started with the environment Batch gives a job, and
 * the job's next status once it ended (succeeded, retried, or failed), decided as Batch decides it: a non-zero exit
 * is retried while attempts remain; a timed-out or cancelled attempt is not.
 *
 * @example
 * const started = startAttempt(row, context);
 * if ('group' in started) started.group.ended.then((end) => store.endAttempt(row, attemptEnd(row, undefined, …), now));
 */
import type { JobRow } from './job-rows.ts';
import type { AttemptEnd } from './job-store.ts';
import { REPOSITORY_ROOT, type LocalJobDefinition } from './job-definitions.ts';
import { jobLogFile } from './job-logs.ts';
import { ProcessGroup } from './process-group.ts';

/** Batch's texts, so logs and alerts read the same on both runtimes. */
const EXITED = 'Essential container in task exited';
const TIMED_OUT = 'Job attempt duration exceeded timeout';

export interface AttemptContext {
  definitions: Record<string, LocalJobDefinition>;
  /** The data folder, given to the job as `FLYWHEEL_DATA_DIR`. */
  dataDir: string;
  logsDir: string;
  /** Base environment of every job. */
  env: NodeJS.ProcessEnv;
  killGraceMs: number;
  now: () => number;
}

/** How an attempt's process ended: an exit code, or the reason it never ran. */
export interface ProcessOutcome {
  exitCode?: number;
  reason?: string;
  timedOut: boolean;
}

/** The variable that marks a job's process (`AWS_BATCH_JOB_ID=<jobId>`), so a pid can be told apart from a reused one. */
export function jobIdVariable(jobId: string): string {
  return `AWS_BATCH_JOB_ID=${jobId}`;
}

/** The runtime's environment, then the definition's and the job's, then Batch's variables, as Batch sets them. */
function attemptEnvironment(row: JobRow, definition: LocalJobDefinition, context: AttemptContext): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...context.env,
    // What the Batch job definition's environment gives a job on AWS (its table and bucket), locally: the data folder.
    FLYWHEEL_DATA_DIR: context.dataDir,
    ...definition.environment,
    ...row.spec.environment,
    AWS_BATCH_JOB_ID: row.job_id,
    AWS_BATCH_JOB_ATTEMPT: String(row.attempts),
    AWS_BATCH_JQ_NAME: `local-${row.pool}`,
    FLYWHEEL_COMPUTE_CATEGORY: row.category,
  };
  if (row.array_index !== null) env['AWS_BATCH_JOB_ARRAY_INDEX'] = String(row.array_index);
  else delete env['AWS_BATCH_JOB_ARRAY_INDEX'];
  return env;
}

/**
 * Starts the process of a claimed row (status STARTING, attempt counted): its definition's command with the job's
 * appended, a leading `node` meaning this process's Node. `cannotStart` when the definition has no local entry point.
 */
export function startAttempt(row: JobRow, context: AttemptContext): { group: ProcessGroup } | { cannotStart: string } {
  const definition = context.definitions[row.definition];
  if (!definition) return { cannotStart: `CannotStartContainerError: no local entry point for job definition "${row.definition}"` };
  const [command, ...args] = [...definition.command, ...(row.spec.command ?? [])];
  if (command === undefined) return { cannotStart: `CannotStartContainerError: job definition "${row.definition}" has an empty command` };
  const group = ProcessGroup.start({
    file: command === 'node' ? process.execPath : command,
    args,
    cwd: definition.cwd ?? REPOSITORY_ROOT,
    env: attemptEnvironment(row, definition, context),
    logFile: jobLogFile(context.logsDir, row.job_id),
    killGraceMs: context.killGraceMs,
    now: context.now,
  });
  return { group };
}

/**
 * The job's next status after an attempt of `current` (its row as stored now) ended: failed with the cancel's reason,
 * failed on timeout, succeeded on exit 0, retried while attempts remain, or failed.
 */
export function attemptEnd(current: JobRow, cancelReason: string | undefined, outcome: ProcessOutcome): AttemptEnd {
  const reasonToStop = cancelReason ?? current.cancel_reason;
  const exitCode = outcome.exitCode ?? null;
  if (reasonToStop) return { status: 'FAILED', reason: reasonToStop, exitCode };
  if (outcome.timedOut) return { status: 'FAILED', reason: TIMED_OUT, exitCode };
  if (exitCode === 0) return { status: 'SUCCEEDED', reason: null, exitCode };
  if (current.attempts < current.max_attempts) {
    return { status: 'RUNNABLE', reason: `attempt ${current.attempts} failed (${outcome.reason ?? `exit code ${exitCode}`}); retrying`, exitCode };
  }
  return { status: 'FAILED', reason: outcome.reason ?? EXITED, exitCode };
}
