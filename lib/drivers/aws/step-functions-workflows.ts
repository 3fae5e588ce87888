/**
 * Workflows port on AWS Step Functions (Standard): `start` is StartExecution with the name as the idempotency key,
 * `describe` is DescribeExecution. Workflow names map to state machine ARNs (`sweep` → the sweep state machine), from
 * the environment the stacks set: `FLYWHEEL_STATE_MACHINE_<NAME>` (`FLYWHEEL_STATE_MACHINE_SWEEP`).
 *
 * Idempotency as the port promises: StartExecution answers ExecutionAlreadyExists for a name that ran (closed) or
 * runs with another input; the driver then describes that execution and returns it when its input is the same value
 * (inputs are sent as canonical JSON, keys sorted), and throws `Flywheel.ExecutionAlreadyExists` otherwise.
 *
 * @example
 * const workflows = StepFunctionsWorkflows.fromEnv(); // FLYWHEEL_STATE_MACHINE_SWEEP=arn:aws:states:…:stateMachine:…
 * const { executionId } = await workflows.start('sweep', { name: 'nightly-2026-12-02', input });
 */
import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  InvalidArn,
  InvalidName,
  SFNClient,
  StartExecutionCommand,
  type DescribeExecutionCommandOutput,
} from '@aws-sdk/client-sfn';
import { NotFoundError, ValidationError } from '../../errors.ts';
import type { ExecutionDescription, ExecutionStatus, WorkflowsPort } from '../../ports/workflows.ts';
import { canonicalJson } from '../canonical-json.ts';
import { ExecutionAlreadyExistsError, ExecutionNotFoundError } from '../workflow-errors.ts';

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

  async start(workflow: string, options: { name: string; input: unknown }): Promise<{ executionId: string }> {
    const stateMachineArn = this.#stateMachines[workflow];
    if (!stateMachineArn) {
      throw new NotFoundError(`no workflow named ${workflow} (set ${stateMachineEnvName(workflow)}; known: ${Object.keys(this.#stateMachines).join(', ') || 'none'})`);
    }
    const input = canonicalJson(options.input ?? {});
    try {
      const started = await this.#client.send(new StartExecutionCommand({ stateMachineArn, name: options.name, input }));
      return { executionId: started.executionArn! };
    } catch (error) {
      if (error instanceof InvalidName) throw new ValidationError(`execution name ${JSON.stringify(options.name)}: ${error.message}`, [{ path: 'name', message: error.message }]);
      if (!(error instanceof ExecutionAlreadyExists)) throw error;
    }
    const executionId = executionArnOf(stateMachineArn, options.name);
    const existing = await this.describe(executionId);
    if (canonicalJson(existing.input) !== input) {
      throw new ExecutionAlreadyExistsError(`execution ${options.name} of ${workflow} exists with another input`);
    }
    return { executionId };
  }

  async describe(executionId: string): Promise<ExecutionDescription> {
    let out: DescribeExecutionCommandOutput;
    try {
      out = await this.#client.send(new DescribeExecutionCommand({ executionArn: executionId }));
    } catch (error) {
      if (error instanceof ExecutionDoesNotExist || error instanceof InvalidArn) throw new ExecutionNotFoundError(executionId);
      throw error;
    }
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

  #workflowOf(stateMachineArn: string): string {
    const known = Object.entries(this.#stateMachines).find(([, arn]) => arn === stateMachineArn);
    return known?.[0] ?? stateMachineArn.split(':').at(-1) ?? stateMachineArn;
  }
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
