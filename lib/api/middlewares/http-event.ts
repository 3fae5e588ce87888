import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { MiddlewareObj } from '@middy/core';
import type { HttpResult } from '../json-response.ts';

/** The API Gateway event after `parseJsonBody()`: `jsonBody` holds the parsed body. */
export type JsonApiEvent = APIGatewayProxyEvent & { jsonBody?: unknown };

/** The middleware shape every HTTP middleware here has: middy's own, over our event and result. */
export type HttpMiddleware = MiddlewareObj<JsonApiEvent, HttpResult | APIGatewayProxyResult>;

/** A header by name, whatever its case (API Gateway keeps the client's casing; the local server lower-cases). */
export function header(event: APIGatewayProxyEvent, name: string): string | undefined {
  const headers = event.headers;
  if (!headers) return undefined;
  const direct = headers[name];
  if (direct !== undefined) return direct;
  const lower = name.toLowerCase();
  for (const key in headers) if (key.toLowerCase() === lower) return headers[key];
  return undefined;
}
