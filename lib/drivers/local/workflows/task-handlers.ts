/**
 * One local handler per Task state of a definition, by state name, dispatched by resource as Step Functions would:
 * - `arn:aws:states:::lambda:invoke`: the handler registered for `Parameters.FunctionName` gets `Parameters.Payload`;
 *   its answer comes back as `{ Payload, StatusCode: 200 }` (the Lambda integration's shape, so `$.Payload…`
 *   selectors work unchanged). A handler's error keeps its name (`Flywheel.ValidationError`), as a Lambda's
 *   errorType does; an answer over 256 KiB fails the state, as on AWS.
 * - `arn:aws:states:::batch:submitJob(.sync)`: `batch-task.ts`, with an idempotency token per submission made of the
 *   run's token scope, the job name and the try number.
 *
 * @example
 * machine.run(input, { overrides: { taskResourceLocalHandlers: taskHandlers(spec, { tokenScope, signal }) } });
 */
import type { RunOptions, StateMachine } from 'aws-local-stepfunctions';
import { z } from 'zod';
import { firstIssue } from '../../../shared/field-issues.ts';
import { submitBatchTask, batchSubmitParameters } from './batch-task.ts';
import { namedError } from './named-error.ts';
import { taskStates } from './task-states.ts';
import type { LocalWorkflowSpec } from './workflow-spec.ts';

/** Step Functions' largest state payload. */
export const MAX_PAYLOAD_BYTES = 256 * 1024;

type JsonValue = Parameters<StateMachine['run']>[0];
export type TaskHandlers = NonNullable<NonNullable<RunOptions['overrides']>['taskResourceLocalHandlers']>;

const lambdaInvokeParameters = z.object({ FunctionName: z.string(), Payload: z.unknown().optional() });

/** A value as JSON carries it (what crosses a state boundary on AWS): undefined becomes null. */
function asJson(value: unknown): JsonValue {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}

/** The Task's parameters decoded by `schema`; a mismatch fails the state with `errorName`, naming the field. */
function decodeParameters<Schema extends z.ZodType>(schema: Schema, input: JsonValue, state: string, errorName: string): z.output<Schema> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const { path, message } = firstIssue(result.error);
  throw namedError(errorName, `state ${state}: parameter ${path || '(all)'}: ${message}`);
}

/**
 * The handlers of one run. `tokenScope` names the execution and its generation; the try number makes each Retry a
 * new job, and makes a resumed run (which counts tries from 0 again) find the jobs of the run before it, so a
 * finished one is not run twice. `signal` stops a `.sync` wait when the run is stopped.
 */
export function taskHandlers(spec: LocalWorkflowSpec, options: { tokenScope: string; signal: AbortSignal }): TaskHandlers {
  const batchTries = new Map<string, number>();
  const handlers: TaskHandlers = {};
  for (const [name, state] of taskStates(spec.definition)) {
    const resource = String(state.Resource);
    if (resource === 'arn:aws:states:::lambda:invoke') {
      handlers[name] = async (input) => {
        const parameters = decodeParameters(lambdaInvokeParameters, input, name, 'Lambda.InvalidParameterValueException');
        const handler = spec.lambdas[parameters.FunctionName];
        if (!handler) throw namedError('Lambda.ResourceNotFoundException', `no local handler for function ${parameters.FunctionName}`);
        const payload = asJson(await handler(parameters.Payload ?? {}));
        if (Buffer.byteLength(JSON.stringify(payload)) > MAX_PAYLOAD_BYTES) {
          throw namedError('States.DataLimitExceeded', `${parameters.FunctionName} answered over 256 KiB: pass keys, not bodies`);
        }
        return { ExecutedVersion: '$LATEST', Payload: payload, StatusCode: 200 };
      };
    } else if (resource === 'arn:aws:states:::batch:submitJob.sync' || resource === 'arn:aws:states:::batch:submitJob') {
      const sync = resource.endsWith('.sync');
      handlers[name] = async (input) => {
        const parameters = decodeParameters(batchSubmitParameters, input, name, 'Batch.ClientException');
        // Counted once the submission is valid: a refused one is not a try.
        const idempotencyToken = (): string => {
          const tryNumber = batchTries.get(parameters.JobName) ?? 0;
          batchTries.set(parameters.JobName, tryNumber + 1);
          return `${options.tokenScope}/${parameters.JobName}/${tryNumber}`;
        };
        return asJson(await submitBatchTask(spec.batch, parameters, { sync, idempotencyToken, signal: options.signal }));
      };
    } else {
      throw new Error(`state ${name}: resource ${resource} has no local handler (the subset is Lambda invoke and Batch submitJob)`);
    }
  }
  return handlers;
}
