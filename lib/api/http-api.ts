import middy, { type MiddlewareObj, type MiddyfiedHandler } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { ApiHandler } from './route.ts';
import type { HttpResult } from './json-response.ts';
import { bodySizeLimit } from './middlewares/body-size-limit.ts';
import type { HttpMiddleware, JsonApiEvent } from './middlewares/http-event.ts';
import { jsonResponses } from './middlewares/json-responses.ts';
import { parseJsonBody } from './middlewares/parse-json-body.ts';
import { requireJsonContentType } from './middlewares/require-json-content-type.ts';

/** Body limits of the routes that take one (bytes). Lambda's synchronous payload is 6 MB: stay under it. */
export const BODY_LIMITS = {
  feedback: 5 * 1024 * 1024,
  reports: 512 * 1024,
  onlineEvents: 2 * 1024 * 1024, // POST /v1/metrics and /v1/exposures: 500 items of ≤ ~2.2 KB each
} as const;

/**
 * A middy handler in API Gateway's REST proxy shape; `functions/**` add Powertools middlewares with `.use()`.
 * It is also a plain `ApiHandler` (the context is optional outside Lambda).
 */
export type HttpApiHandler = MiddyfiedHandler<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context> & ApiHandler;

export interface HttpApiOptions {
  /** When set, the route takes a JSON body up to this many bytes (413 above, 415 unless JSON, 400 if malformed). */
  jsonBodyMaxBytes?: number;
}

/**
 * Composes the HTTP edge around a use-case adapter: JSON responses and error mapping outermost, then (for routes
 * with a body) size check before parsing, content type, JSON parse. The result is a plain middy handler used
 * unchanged by Lambda and the local server.
 *
 * @example
 * export const makeGetThingHandler = (ports: Ports) =>
 *   httpApi(async (event) => ({ statusCode: 200, body: await getThing(ports, event.pathParameters?.id ?? '') }));
 */
export function httpApi(handler: (event: JsonApiEvent) => Promise<HttpResult>, options: HttpApiOptions = {}): HttpApiHandler {
  const middlewares: HttpMiddleware[] = [jsonResponses()];
  if (options.jsonBodyMaxBytes !== undefined) {
    middlewares.push(bodySizeLimit(options.jsonBodyMaxBytes), requireJsonContentType(), parseJsonBody());
  }
  const m = middy<JsonApiEvent, APIGatewayProxyResult, Error, Context>(
    handler as unknown as (event: JsonApiEvent) => Promise<APIGatewayProxyResult>,
  );
  m.use(middlewares as Array<MiddlewareObj<JsonApiEvent, APIGatewayProxyResult, Error, Context>>);
  return m as unknown as HttpApiHandler;
}
