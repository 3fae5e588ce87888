/**
 * The pieces every capability's `http/operations.ts` describes its routes with, for the OpenAPI document
 * (`lib/api/openapi.ts`): the operation type, an error answer (`ErrorBody`) and the error answers every read and every
 * body-taking route can give. Here, in the HTTP shell, so no capability's http/ folder imports another's.
 *
 * @example
 * const ops: Record<string, OperationDoc> = { getThing: { summary: 'A thing', responses: { 404: errorDoc('No such thing.'), ...READ_ERRORS } } };
 */
import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import { ErrorBody } from '../shared/error-body.ts';

export type OperationDoc = Omit<RouteConfig, 'method' | 'path' | 'operationId'>;

/** An error answer: `ErrorBody` with this description. */
export const errorDoc = (description: string) => ({ description, content: { 'application/json': { schema: ErrorBody } } });

/** The errors of a route without a body (API Gateway gives 401/403/429 itself). */
export const READ_ERRORS: RouteConfig['responses'] = {
  400: errorDoc('Invalid query: `issues` lists every offending field.'),
  401: errorDoc('Missing API key (x-api-key header).'),
  403: errorDoc('Invalid API key.'),
  429: errorDoc('Throttled by the usage plan; retry after the Retry-After header.'),
};

/** The errors a route taking a JSON body of at most `limit` bytes adds. */
export const bodyErrors = (limit: number): RouteConfig['responses'] => ({
  413: errorDoc(`Body over ${limit} bytes.`),
  415: errorDoc('Content-Type is not application/json.'),
});
