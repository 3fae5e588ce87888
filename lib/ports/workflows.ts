/**
 * Workflows port: start and describe executions of a state machine, named by the definition it runs.
 *
 * Drivers: AWS Step Functions (`lib/drivers/aws/step-functions-workflows.ts`) and a local driver
 * (`lib/drivers/local/local-workflows.ts`) that runs the very definition the CDK app synthesizes with the npm package
 * `aws-local-stepfunctions`, one local handler per Task state. Both pass `test/contract/workflows.contract.ts`.
 *
 * Execution names are idempotency keys: starting a name that already ran with the same input returns that execution
 * (Step Functions does the same for Standard workflows), so a re-run of the same sweep id resumes instead of
 * double-counting. Starting it again after it ended FAILED, TIMED_OUT or ABORTED resumes it: the answer is an
 * execution that runs again with the same input (on AWS a redrive of the same execution, or where Step Functions
 * can no longer redrive it a continuation `<name>.r2`; locally the same execution run again). Steps must therefore be
 * idempotent. A SUCCEEDED execution is returned as it is, unless `again` asks to run it once more.
 *
 * @example
 * const { executionId } = await workflows.start('sweep', { name: 'sweep-2026-12-02', input: { sweepKey } });
 * const execution = await workflows.describe(executionId); // execution.status: 'RUNNING' | 'SUCCEEDED' | …
 * await workflows.stop(executionId, { error: 'Flywheel.Stopped', cause: 'stopped by alice' }); // → ABORTED
 */

export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';

export interface ExecutionDescription {
  executionId: string;
  workflow: string;
  name: string;
  status: ExecutionStatus;
  input: unknown;
  output?: unknown;
  error?: string;
  cause?: string;
  /** Epoch milliseconds. */
  startedAt: number;
  stoppedAt?: number;
}

export interface StartOptions {
  name: string;
  input: unknown;
  /**
   * Run it again even if it SUCCEEDED (a sweep that ended with failed shards, asked to retry them): on AWS the next
   * continuation `<name>.r<n>`, locally the same execution run again. Not idempotent by nature: a caller sets it only
   * when the last end asks for it. A RUNNING execution is returned as ever.
   */
  again?: boolean;
}

export interface WorkflowsPort {
  /**
   * Starts `workflow` (a definition the deployment knows, e.g. `sweep`) with a small JSON input (keys, not bodies);
   * the same name and input again returns that execution, resumed if it ended unsuccessfully.
   */
  start(workflow: string, options: StartOptions): Promise<{ executionId: string }>;
  /** Throws `Flywheel.ExecutionNotFound` for an unknown id. */
  describe(executionId: string): Promise<ExecutionDescription>;
  /**
   * Stops a RUNNING execution: it ends ABORTED with `error` and `cause` (Step Functions' StopExecution). An execution
   * that already ended is left as it is (stopping twice is harmless). Starting its name again resumes it, as for any
   * unsuccessful end. Throws `Flywheel.ExecutionNotFound` for an unknown id.
   */
  stop(executionId: string, options?: { error?: string; cause?: string }): Promise<void>;
}
