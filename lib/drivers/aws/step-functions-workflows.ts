/**
 * Workflows port on AWS Step Functions (Standard): `start` is StartExecution with the name as the idempotency key,
 * `describe` is DescribeExecution, `stop` is StopExecution. Workflow names map to state machine ARNs (`sweep` → the sweep state machine), from
 * the environment the stacks set: `FLYWHEEL_STATE_MACHINE_<NAME>` (`FLYWHEEL_STATE_MACHINE_SWEEP`).
 *
 * Idempotency as the port promises: StartExecution answers ExecutionAlreadyExists for a name that ran (closed) or
 * runs with another input; the driver then describes that execution and returns it when its input is the same value
 * (inputs are sent as canonical JSON, keys sorted), and throws `Flywheel.ExecutionAlreadyExists` otherwise.
 *
 * Resuming, as the port promises for an execution that ended FAILED, TIMED_OUT or ABORTED:
 * - Redrivable (Step Functions says `redriveStatus: REDRIVABLE`: under 14 days old, under 1,000 redrives):
 *   RedriveExecution, the native resume. It continues from the unsuccessful state with the same input and the same
 *   execution ARN; succeeded steps and succeeded Map iterations are not run again. The client token is the redrive
 *   number, so two callers resuming at once redrive once.
 * - Not redrivable (too old, or an endpoint that does not report redrive status): a continuation execution named
 *   `<name>.r2` (then `.r3`, …; `.` never occurs in a sweep id, so a continuation cannot collide with another sweep)
 *   with the same input. The steps are idempotent, so it picks up what the earlier execution left.
 *   The chain is walked to its last link on every start, so a second start returns the running continuation and
 *   a plain start after a continuation answers the newest run. `again` (run a succeeded execution once more)
 *   starts the link after the last one.
 *
 * @example
 * const workflows = StepFunctionsWorkflows.fromEnv(); // FLYWHEEL_STATE_MACHINE_SWEEP=arn:aws:states:…:stateMachine:…
 * const { executionId } = await workflows.start('sweep', { name: 'nightly-2026-12-02', input });
 */
import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  ExecutionNotRedrivable,
  InvalidArn,
  InvalidName,
  RedriveExecutionCommand,
  SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
  type DescribeExecutionCommandOutput,
} from '@aws-sdk/client-sfn';
import { NotFoundError, ValidationError } from '../../errors.ts';
import { ResumeLimitExceededError } from './aws-driver-errors.ts';
import type { ExecutionDescription, ExecutionStatus, StartOptions, WorkflowsPort } from '../../ports/workflows.ts';
import { canonicalJson } from '../../shared/canonical-json.ts';
import { ExecutionAlreadyExistsError, ExecutionNotFoundError } from '../../ports/workflow-errors.ts';

/** The environment variable holding a workflow's state machine ARN: `sweep` → `FLYWHEEL_STATE_MACHINE_SWEEP`. */
export function stateMachineEnvName(workflow: string): string {
  return `FLYWHEEL_STATE_MACHINE_${workflow.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

const ENV_PREFIX = 'FLYWHEEL_STATE_MACHINE_';

export class StepFunctionsWorkflows implements WorkflowsPort {
  readonly #client: SFNClient;
  readonly #stateMachines: Record<string, string>;

  constructor(client: SFNClient, stateMachines: Record<string, string>) {
    this.#client = client;
    this.#stateMachines = stateMachines;
  }

  /** Every `FLYWHEEL_STATE_MACHINE_<NAME>` of the environment, `<NAME>` lower-cased with `_` → `-` as the workflow name. */
  static fromEnv(env: Record<string, string | undefined> = process.env, client: SFNClient = new SFNClient({})): StepFunctionsWorkflows {
    const machines: Record<string, string> = {};
    for (const [name, value] of Object.entries(env)) {
      if (name.startsWith(ENV_PREFIX) && value) machines[name.slice(ENV_PREFIX.length).toLowerCase().replace(/_/g, '-')] = value;
    }
    return new StepFunctionsWorkflows(client, machines);
  }

  async start(workflow: string, options: StartOptions): Promise<{ executionId: string }> {
    const stateMachineArn = this.#stateMachines[workflow];
    if (!stateMachineArn) {
      throw new NotFoundError(`no workflow named ${workflow} (set ${stateMachineEnvName(workflow)}; known: ${Object.keys(this.#stateMachines).join(', ') || 'none'})`);
    }
    const input = canonicalJson(options.input ?? {});
    for (let run = 1; run <= MAX_CONTINUATIONS + 1; run++) {
      const name = continuationName(options.name, run);
      const started = await this.#startOrFind(stateMachineArn, name, input);
      if ('executionId' in started) return started;
      const existing = started.existing;
      if (canonicalJson(existing.input) !== input) {
        throw new ExecutionAlreadyExistsError(`execution ${name} of ${workflow} exists with another input`);
      }
      if (existing.status === 'RUNNING') return { executionId: existing.executionArn };
      // A later link exists: it holds the newer run, so the walk goes on to it.
      if (run <= MAX_CONTINUATIONS && (await this.#exists(executionArnOf(stateMachineArn, continuationName(options.name, run + 1))))) continue;
      // The last link. Succeeded: the answer, unless asked to run it again, which the next link does.
      if (existing.status === 'SUCCEEDED' && !options.again) return { executionId: existing.executionArn };
      if (existing.status !== 'SUCCEEDED' && existing.redriveStatus === 'REDRIVABLE' && (await this.#redrive(existing))) return { executionId: existing.executionArn };
      // Ended unsuccessfully and not redrivable (or succeeded and asked again): the next link continues it.
    }
    throw new ResumeLimitExceededError(`execution ${options.name} of ${workflow} has run ${MAX_CONTINUATIONS + 1} times (every continuation used); start it under a new name`);
  }

  /** StartExecution, or (the name is taken) what DescribeExecution says of the execution holding it. */
  async #startOrFind(stateMachineArn: string, name: string, input: string): Promise<{ executionId: string } | { existing: ExistingExecution }> {
    try {
      const started = await this.#client.send(new StartExecutionCommand({ stateMachineArn, name, input }));
      return { executionId: started.executionArn! };
    } catch (error) {
      if (error instanceof InvalidName) throw new ValidationError(`execution name ${JSON.stringify(name)}: ${error.message}`, [{ path: 'name', message: error.message }]);
      if (!(error instanceof ExecutionAlreadyExists)) throw error;
    }
    const executionArn = executionArnOf(stateMachineArn, name);
    const out = await this.#describeRaw(executionArn);
    return {
      existing: {
        executionArn,
        status: statusOf(out.status),
        input: out.input ? (JSON.parse(out.input) as unknown) : undefined,
        redriveStatus: out.redriveStatus,
        redriveCount: out.redriveCount ?? 0,
      },
    };
  }

  /** RedriveExecution; false when Step Functions refuses (it became unredrivable since it was described). */
  async #redrive(existing: ExistingExecution): Promise<boolean> {
    try {
      // The same token for every caller resuming this end of the execution: Step Functions redrives it once.
      await this.#client.send(new RedriveExecutionCommand({ executionArn: existing.executionArn, clientToken: `redrive-${existing.redriveCount + 1}` }));
      return true;
    } catch (error) {
      if (error instanceof ExecutionNotRedrivable) return false;
      throw error;
    }
  }

  async describe(executionId: string): Promise<ExecutionDescription> {
    const out = await this.#describeRaw(executionId);
    return {
      executionId,
      workflow: this.#workflowOf(out.stateMachineArn ?? ''),
      name: out.name ?? executionId.split(':').at(-1)!,
      status: statusOf(out.status),
      input: out.input ? (JSON.parse(out.input) as unknown) : undefined,
      ...(out.output ? { output: JSON.parse(out.output) as unknown } : {}),
      ...(out.error ? { error: out.error } : {}),
      ...(out.cause ? { cause: out.cause } : {}),
      startedAt: out.startDate!.getTime(),
      ...(out.stopDate ? { stoppedAt: out.stopDate.getTime() } : {}),
    };
  }

  /**
   * StopExecution of a running execution (a redrive in progress counts as running). One that has ended is left as it
   * is, as the port promises, without asking Step Functions to stop it; an unknown one is `Flywheel.ExecutionNotFound`.
   */
  async stop(executionId: string, options: { error?: string; cause?: string } = {}): Promise<void> {
    if (statusOf((await this.#describeRaw(executionId)).status) !== 'RUNNING') return;
    try {
      await this.#client.send(
        new StopExecutionCommand({
          executionArn: executionId,
          ...(options.error ? { error: options.error.slice(0, 256) } : {}),
          ...(options.cause ? { cause: options.cause.slice(0, 32_768) } : {}),
        }),
      );
    } catch (error) {
      if (error instanceof ExecutionDoesNotExist || error instanceof InvalidArn) throw new ExecutionNotFoundError(executionId);
      throw error;
    }
  }

  async #exists(executionArn: string): Promise<boolean> {
    return this.#describeRaw(executionArn).then(
      () => true,
      (error: unknown) => {
        if (error instanceof ExecutionNotFoundError) return false;
        throw error;
      },
    );
  }

  async #describeRaw(executionArn: string): Promise<DescribeExecutionCommandOutput> {
    try {
      return await this.#client.send(new DescribeExecutionCommand({ executionArn }));
    } catch (error) {
      if (error instanceof ExecutionDoesNotExist || error instanceof InvalidArn) throw new ExecutionNotFoundError(executionArn);
      throw error;
    }
  }

  #workflowOf(stateMachineArn: string): string {
    const known = Object.entries(this.#stateMachines).find(([, arn]) => arn === stateMachineArn);
    return known?.[0] ?? stateMachineArn.split(':').at(-1) ?? stateMachineArn;
  }
}

interface ExistingExecution {
  executionArn: string;
  status: ExecutionStatus;
  input: unknown;
  redriveStatus: string | undefined;
  redriveCount: number;
}

/**
 * Continuations an execution name may have (`.r2` … `.r21`). Each is a whole unsuccessful end after the redrives
 * Step Functions allows (1,000 per execution, within 14 days), so 20 is far more than a sweep meets; past it the
 * name needs a person's look, not another automatic run.
 */
export const MAX_CONTINUATIONS = 20;

/** Run 1 is the name itself; run n ≥ 2 is `<name>.r<n>`, cut to Step Functions' 80 characters. */
export function continuationName(name: string, run: number): string {
  if (run === 1) return name;
  const suffix = `.r${run}`;
  return `${name.slice(0, 80 - suffix.length)}${suffix}`;
}

/** `arn:…:stateMachine:<machine>` + name → `arn:…:execution:<machine>:<name>`, as Step Functions names executions. */
export function executionArnOf(stateMachineArn: string, name: string): string {
  return `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
}

/** PENDING_REDRIVE is a failed execution being redriven: running again, as far as a caller is concerned. */
function statusOf(status: string | undefined): ExecutionStatus {
  switch (status) {
    case 'SUCCEEDED':
    case 'FAILED':
    case 'TIMED_OUT':
    case 'ABORTED':
      return status;
    default:
      return 'RUNNING';
  }
}
