import type { APIGatewayProxyResult } from 'aws-lambda';
import { ValidationError } from '../errors.ts';
import { ERROR_STATUS, HttpErrorNames, MethodNotAllowedError, ThrottledError } from './http-errors.ts';

export const JSON_HEADERS: Readonly<Record<string, string>> = { 'content-type': 'application/json; charset=utf-8' };

/** What an HTTP use-case adapter returns; `jsonResponse()` serialises it. */
export interface HttpResult {
  statusCode: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** Serialises a result as an API Gateway proxy response with a JSON content type. */
export function toProxyResult(result: HttpResult): APIGatewayProxyResult {
  return {
    statusCode: result.statusCode,
    headers: result.headers ? { ...JSON_HEADERS, ...result.headers } : { ...JSON_HEADERS },
    body: JSON.stringify(result.body),
  };
}

/**
 * The response for an error: namespaced errors get their status and `{ error, message, issues? }`; anything else is a
 * 500 that reveals nothing but its name, and is logged as structured JSON.
 *
 * @example
 * errorResult(new UnauthorizedError()); // { statusCode: 401, body: '{"error":"Flywheel.Unauthorized",…}' }
 */
export function errorResult(err: unknown): APIGatewayProxyResult {
  const name = err instanceof Error ? err.name : 'Error';
  const status = ERROR_STATUS[name];
  if (status === undefined) {
    console.error(
      JSON.stringify({
        level: 'ERROR',
        message: 'Unhandled error in HTTP handler',
        error: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err),
      }),
    );
    return toProxyResult({ statusCode: 500, body: { error: HttpErrorNames.internal, message: 'Internal error' } });
  }
  const e = err as Error;
  const body: Record<string, unknown> = { error: name, message: e.message };
  if (err instanceof ValidationError) body.issues = err.issues;
  const headers: Record<string, string> = {};
  if (err instanceof ThrottledError) headers['retry-after'] = String(err.retryAfterSeconds);
  if (err instanceof MethodNotAllowedError) headers.allow = err.allow.join(', ');
  return toProxyResult({ statusCode: status, body, headers });
}
