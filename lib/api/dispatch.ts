import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { Ports } from '../ports/ports.ts';
import type { HttpApiHandler } from './http-api.ts';
import { MethodNotAllowedError, RouteNotFoundError } from './http-errors.ts';
import { errorResult } from './json-response.ts';
import type { ApiHandler, RouteSpec } from './route.ts';

interface CompiledRoute {
  spec: RouteSpec;
  handler: ApiHandler;
  /** Matches a concrete path and captures `{param}` segments. */
  pattern: RegExp;
  params: string[];
}

/**
 * One handler for several routes: picks the route from `event.resource` + `event.httpMethod` (what API Gateway
 * sends), or, when `resource` is not a route template (a plain local request), matches `event.path` against the
 * templates and fills `pathParameters`. Handlers are built once, here. Unknown paths get 404, known paths with
 * another method 405, both as JSON errors.
 *
 * The result is a middy handler, so Lambda entries add Powertools middlewares with `.use()`.
 *
 * @example
 * const dispatch = makeDispatcher(routes, ports);
 * await dispatch({ httpMethod: 'POST', resource: '/v1/feedback', path: '/v1/feedback', body, headers, … }, context);
 */
export function makeDispatcher(routeSpecs: readonly RouteSpec[], ports: Ports): HttpApiHandler {
  const compiled: CompiledRoute[] = routeSpecs.map((spec) => {
    const params: string[] = [];
    const source = spec.path
      .split('/')
      .map((seg) => {
        const m = /^\{(\w+)\+?\}$/.exec(seg);
        if (!m) return seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        params.push(m[1]!);
        return '([^/]+)';
      })
      .join('/');
    return { spec, handler: spec.make(ports), pattern: new RegExp(`^${source}/?$`), params };
  });
  const byKey = new Map(compiled.map((c) => [`${c.spec.method} ${c.spec.path}`, c]));

  const dispatch = async (event: APIGatewayProxyEvent, context: Context): Promise<APIGatewayProxyResult> => {
    const method = event.httpMethod.toUpperCase();
    let route = byKey.get(`${method} ${event.resource}`);
    if (!route) {
      const path = event.path ?? event.resource;
      const matching = compiled.filter((c) => c.pattern.test(path));
      // Prefer a literal route over a templated one (`/v1/openapi.json` over `/v1/{x}`).
      matching.sort((a, b) => a.params.length - b.params.length);
      route = matching.find((c) => c.spec.method === method);
      if (!route) {
        if (matching.length > 0) {
          return errorResult(new MethodNotAllowedError(method, path, [...new Set(matching.map((c) => c.spec.method))]));
        }
        return errorResult(new RouteNotFoundError(method, path));
      }
      const m = route.pattern.exec(path)!;
      if (route.params.length > 0) {
        const pathParameters: Record<string, string | undefined> = { ...(event.pathParameters ?? {}) };
        route.params.forEach((name, i) => {
          pathParameters[name] = decodeURIComponent(m[i + 1]!);
        });
        event = { ...event, resource: route.spec.path, pathParameters };
      } else {
        event = { ...event, resource: route.spec.path };
      }
    }
    return (route.handler as (e: APIGatewayProxyEvent, c?: Context) => Promise<APIGatewayProxyResult>)(event, context);
  };
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>(dispatch) as unknown as HttpApiHandler;
}
