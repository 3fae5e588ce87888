/**
 * One run of an execution: the definition run by `aws-local-stepfunctions` with a local handler per Task state, its
 * state events appended to the store as they happen, and its end (SUCCEEDED with output, FAILED with error and
 * cause, TIMED_OUT, ABORTED) in Step Functions' terms. A run stopped with `abort` ends with nothing to record: the
 * row stays RUNNING, to be resumed.
 *
 * @example
 * const run = startExecutionRun(row, spec, { appendEvent: store.eventAppender(row.execution_id, row.runs) });
 * const end = await run.ended; // undefined after run.abort()
 */
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import type { ExecutionEnd, ExecutionRow, NewEvent } from './execution-store.ts';
import { taskHandlers } from './task-handlers.ts';
import type { LocalWorkflowSpec } from './workflow-spec.ts';

export interface ExecutionRunOptions {
  appendEvent: (event: NewEvent) => void;
  /** Retry pauses in ms by state name (the library's `retryIntervalOverrides`). */
  retryPauseOverrides?: Record<string, number | number[]>;
}

export interface ExecutionRun {
  /** Stops the states and the handlers' own waits (a `.sync` poll); `ended` then settles with undefined. */
  abort(): void;
  /** The run's end, once its events are stored; undefined when it was aborted. */
  ended: Promise<ExecutionEnd | undefined>;
}

/** The library's state machine for a definition (the cast is the library's type for an ASL document). */
export function stateMachineOf(definition: object, validate: boolean): StateMachine {
  return new StateMachine(definition as StateMachineDefinition, validate ? {} : { validationOptions: { noValidate: true } });
}

function property(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? Reflect.get(value, key) : undefined;
}

/** Step Functions' status, error and cause for what the library's result threw. */
function failureOf(thrown: unknown): ExecutionEnd {
  const kind = thrown instanceof Error ? thrown.constructor.name : '';
  if (kind === 'ExecutionTimeoutError') return { status: 'TIMED_OUT', output: null, error: 'States.Timeout', cause: 'the execution ran past TimeoutSeconds' };
  if (kind === 'ExecutionAbortedError') return { status: 'ABORTED', output: null, error: 'States.Aborted', cause: 'aborted' };
  const inner = property(thrown, 'cause') ?? thrown;
  const name = property(inner, 'name');
  const message = property(inner, 'message');
  return { status: 'FAILED', output: null, error: typeof name === 'string' ? name : 'Error', cause: typeof message === 'string' ? message : String(thrown) };
}

export function startExecutionRun(row: ExecutionRow, spec: LocalWorkflowSpec, options: ExecutionRunOptions): ExecutionRun {
  const input = JSON.parse(row.input);
  const stopped = new AbortController();
  // Tokens name the execution and its generation (the first keeps the plain id, as folders made before it have).
  const tokenScope = row.generation > 0 ? `${row.execution_id}~g${row.generation}` : row.execution_id;
  const execution = stateMachineOf(spec.definition, false).run(input, {
    overrides: {
      taskResourceLocalHandlers: taskHandlers(spec, { tokenScope, signal: stopped.signal }),
      ...(options.retryPauseOverrides ? { retryIntervalOverrides: options.retryPauseOverrides } : {}),
    },
    context: {
      Execution: { Id: row.execution_id, Name: row.name, Input: input, StartTime: new Date(row.started_at).toISOString() },
      StateMachine: { Id: `arn:aws:states:local:000000000000:stateMachine:${row.workflow}`, Name: row.workflow },
    },
  });
  let aborted = false;
  const recording = (async () => {
    for await (const event of execution.eventLogs) {
      options.appendEvent({
        type: event.type,
        state: 'state' in event ? event.state.name : 'parentState' in event ? event.parentState.name : null,
        mapIndex: 'index' in event ? (event.index ?? null) : null,
        error: 'Error' in event ? event.Error : null,
        at: event.timestamp ?? Date.now(),
      });
    }
  })();
  const ended = (async (): Promise<ExecutionEnd | undefined> => {
    let end: ExecutionEnd;
    try {
      end = { status: 'SUCCEEDED', output: JSON.stringify(await execution.result), error: null, cause: null };
    } catch (thrown) {
      end = failureOf(thrown);
    }
    await recording.catch(() => undefined);
    return aborted ? undefined : end;
  })();
  return {
    abort: () => {
      aborted = true;
      stopped.abort();
      execution.abort();
    },
    ended,
  };
}
