/**
 * Errors a Task state throws by name (`Batch.ClientException`, `States.TaskFailed`): the name is what the state
 * machine's Retry and Catch match on, as a Lambda's errorType or a service integration's error code is on AWS.
 *
 * @example
 * throw namedError('Lambda.ResourceNotFoundException', `no local handler for function ${name}`);
 */
export function namedError(name: string, message: string): Error {
  const error = new Error(message);
  error.name = name;
  return error;
}
