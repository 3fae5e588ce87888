import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { principalOfContext, requireScope, type Principal } from '../auth/authorize-request.ts';
import { DEFAULT_TENANT } from '../auth/scopes.ts';
import { scopePortsToTenant } from '../auth/tenant-ports.ts';
import type { Ports } from '../ports/ports.ts';
import type { HttpApiHandler } from './http-api.ts';
import { ForbiddenError } from '../auth/forbidden-error.ts';
import { MethodNotAllowedError, RouteNotFoundError } from './http-errors.ts';
import { errorResult } from './json-response.ts';
import type { ApiHandler, RouteSpec } from './route.ts';

/** Who calls an open route (`apiKeyRequired: false`): nobody known; the handler checks its caller itself. */
const OPEN_PRINCIPAL = { tenant: DEFAULT_TENANT, scopes: [], keyId: 'open' } as const satisfies Principal;

interface CompiledRoute {
  spec: RouteSpec;
  /** Matches a concrete path and captures `{param}` segments. */
  pattern: RegExp;
  params: string[];
}

/** Tenants whose handlers are kept built (each tenant's handlers close over its view of the ports). */
const TENANT_HANDLERS_KEPT = 64;

/**
 * One handler for several routes: picks the route from `event.resource` + `event.httpMethod` (what API Gateway
 * sends), or, when `resource` is not a route template (a plain local request), matches `event.path` against the
 * templates and fills `pathParameters`. Unknown paths get 404, known paths with another method 405, both as JSON
 * errors.
 *
 * Authorization: the request must carry an authorizer context (`requestContext.authorizer`: `tenant`, `scopes`),
 * put there by the Lambda authorizer on AWS (`functions/api/authorizer.ts`) and by the local server after its key
 * check: one code path. Without one, every request is 403 (fail closed); a route whose scope the key lacks is 403
 * naming the scope. The route's handler then runs over the tenant's view of the ports (`scopePortsToTenant`), so one
 * tenant's data is invisible to another. Handlers are built per tenant on first use, and kept.
 *
 * The result is a middy handler, so Lambda entries add Powertools middlewares with `.use()`.
 *
 * @example
 * const dispatch = makeDispatcher(routes, ports);
 * await dispatch({ httpMethod: 'POST', resource: '/v1/feedback', path: '/v1/feedback', body, headers,
 *   requestContext: { authorizer: { tenant: 'default', scopes: 'ingest' }, … }, … }, context);
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
    return { spec, pattern: new RegExp(`^${source}/?$`), params };
  });
  const byKey = new Map(compiled.map((c) => [`${c.spec.method} ${c.spec.path}`, c]));
  const handlers = new Map<string, Map<RouteSpec, ApiHandler>>();
  const handlerFor = (tenant: string, spec: RouteSpec): ApiHandler => {
    let built = handlers.get(tenant);
    if (!built) {
      if (handlers.size >= TENANT_HANDLERS_KEPT) handlers.delete(handlers.keys().next().value!);
      handlers.set(tenant, (built = new Map()));
    }
    let h = built.get(spec);
    if (!h) built.set(spec, (h = spec.make(scopePortsToTenant(ports, tenant))));
    return h;
  };

  const dispatch = async (event: APIGatewayProxyEvent, context: Context): Promise<APIGatewayProxyResult> => {
    const authorized = principalOfContext(event.requestContext?.authorizer);
    const method = event.httpMethod.toUpperCase();
    // Without a principal only an open route may answer: nothing else says which routes exist.
    if (!authorized && !openRouteMatches(compiled, method, event)) {
      return errorResult(new ForbiddenError('Forbidden: the request carries no authorized API key'));
    }
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
    // An open route (the console's files, Slack's signed requests) runs on the default tenant and checks its caller
    // itself; every other route needs the authorizer's principal (fail closed).
    const principal = route.spec.apiKeyRequired ? authorized : OPEN_PRINCIPAL;
    if (!principal) return errorResult(new ForbiddenError('Forbidden: the request carries no authorized API key'));
    try {
      if (route.spec.apiKeyRequired) requireScope(principal, route.spec.scope, route.spec.operationId);
    } catch (error) {
      return errorResult(error);
    }
    const handler = handlerFor(principal.tenant, route.spec);
    return (handler as (e: APIGatewayProxyEvent, c?: Context) => Promise<APIGatewayProxyResult>)(event, context);
  };
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>(dispatch) as unknown as HttpApiHandler;
}

function openRouteMatches(compiled: readonly CompiledRoute[], method: string, event: APIGatewayProxyEvent): boolean {
  const path = event.path ?? event.resource;
  return compiled.some(
    (c) => !c.spec.apiKeyRequired && c.spec.method === method && (c.spec.path === event.resource || c.pattern.test(path)),
  );
}
