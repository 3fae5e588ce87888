import { httpApi, type HttpApiHandler } from '../http-api.ts';
import { buildOpenApiDocument } from '../openapi.ts';
import type { RouteSpec } from '../route.ts';

/** `GET /v1/openapi.json`: the document, built once per process from the route table. */
export function makeGetOpenApiHandler(routes: readonly RouteSpec[]): HttpApiHandler {
  let doc: unknown;
  return httpApi(async () => {
    doc ??= buildOpenApiDocument(routes);
    return { statusCode: 200, body: doc };
  });
}
