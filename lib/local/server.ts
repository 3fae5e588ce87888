import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { RouteSpec } from '../api/route.ts';
import { makeDispatcher } from '../api/dispatch.ts';
import { authorizeRequest, requireScope, toAuthorizerContext, type Principal } from '../auth/authorize-request.ts';
import { DEFAULT_TENANT, SCOPES } from '../auth/scopes.ts';
import type { ApiThrottle } from '../config/stages.ts';
import type { Ports } from '../ports/ports.ts';
import {
  MethodNotAllowedError,
  PayloadTooLargeError,
  RouteNotFoundError,
  ThrottledError,
} from '../api/http-errors.ts';
import { errorResult } from '../api/json-response.ts';
import { TokenBucketThrottle } from './token-bucket.ts';

/** The caller of an open route: no key; the route's handler checks its caller itself (the dispatcher does the same). */
const OPEN_PRINCIPAL: Principal = { tenant: DEFAULT_TENANT, scopes: [], keyId: 'open' };

/** API Gateway REST's payload limit: 10 MB. Bodies above it are refused with 413 while they are read. */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;
/** After a 413 the rest of the body is read and dropped (so the client sees the answer), up to this many bytes. */
const MAX_DRAIN_BYTES = 64 * 1024 * 1024;

export interface LocalServerOptions {
  routes: readonly RouteSpec[];
  ports: Ports;
  /**
   * Keys are checked against the API key records of `ports.records` (`lib/auth/api-keys.ts`). These extra keys are
   * accepted besides, each as a key of the default tenant with every scope (tests and embedders; the runtime passes
   * none).
   */
  apiKeys?: readonly string[];
  /** Rate and burst per key, normally `getStageSettings('local').api`. */
  throttle: ApiThrottle;
  logger?: Logger;
  /** Body cap in bytes; API Gateway's 10 MB unless a test wants less. */
  maxBodyBytes?: number;
  stage?: string;
}

export interface LocalServer {
  server: Server;
  /** Starts listening on 127.0.0.1; `port` 0 picks a free one. Resolves with the base URL. */
  listen(port: number, host?: string): Promise<string>;
  /** Stops accepting, lets in-flight requests finish, closes idle keep-alive sockets. */
  close(): Promise<void>;
}

interface CompiledRoute {
  spec: RouteSpec;
  segments: string[];
  /** Index → parameter name for `{param}` segments. */
  params: Array<[number, string]>;
}

/**
 * The local stand-in for API Gateway: checks the API key first (every request, known route or not: 403 without a
 * valid key, 404 only after one), throttles per key the way a usage plan does, turns the request into a REST (v1)
 * proxy event with the key's principal as the authorizer context (as the Lambda authorizer does on AWS), and calls the
 * dispatcher the Lambda functions wrap, which checks the route's scope and runs it over the tenant's ports.
 *
 * @example
 * const server = createLocalServer({ routes, ports, apiKeys: [key], throttle: getStageSettings('local').api });
 * const url = await server.listen(4010);
 */
export function createLocalServer(options: LocalServerOptions): LocalServer {
  const { ports, logger } = options;
  const maxBody = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const stage = options.stage ?? 'local';
  const staticKeys = new Set(options.apiKeys ?? []);
  const throttle = new TokenBucketThrottle(options.throttle.rateLimit, options.throttle.burstLimit);
  const routes = compileRoutes(options.routes);
  const dispatch = makeDispatcher(options.routes, ports);
  const principalOf = (key: string | undefined): Promise<Principal> =>
    key !== undefined && staticKeys.has(key)
      ? Promise.resolve({ tenant: DEFAULT_TENANT, scopes: [...SCOPES], keyId: 'static' })
      : authorizeRequest(ports.records, key);

  const server = createServer({ keepAlive: true, keepAliveTimeout: 65_000 }, (req, res) => {
    handleRequest(req, res).catch((error: unknown) => {
      logger?.error('local server failure', { error: error as Error });
      if (!res.headersSent) sendJson(res, 502, { message: 'Internal server error' });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;

  async function handleRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = Date.now();
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const method = (req.method ?? 'GET').toUpperCase();

    const apiKeyHeader = req.headers['x-api-key'];
    const apiKey = Array.isArray(apiKeyHeader) ? apiKeyHeader[0] : apiKeyHeader;
    // The key first, for every path but the open routes (the console's files, Slack's signed requests): without a
    // valid key nothing says which routes exist.
    const open = matchRoute(routes.filter((r) => !r.spec.apiKeyRequired), method, path);
    const isOpen = typeof open !== 'string';
    let principal: Principal;
    try {
      principal = isOpen ? OPEN_PRINCIPAL : await principalOf(apiKey);
    } catch (error) {
      return discard(req, res, error as Error);
    }
    const retryAfter = throttle.take(isOpen ? `open:${req.socket.remoteAddress ?? '-'}` : (apiKey ?? '-'));
    if (retryAfter > 0) {
      return discard(req, res, new ThrottledError(retryAfter));
    }

    const match = matchRoute(routes, method, path);
    if (match === 'no-path') return discard(req, res, new RouteNotFoundError(method, path));
    if (match === 'no-method') {
      const allow = routes.filter((r) => matchPath(r, path) !== undefined).map((r) => r.spec.method);
      return discard(req, res, new MethodNotAllowedError(method, path, allow));
    }
    const { route, pathParameters } = match;
    // Before the body is read; the dispatcher checks it again (the one code path the Lambda functions share).
    try {
      if (route.spec.apiKeyRequired) requireScope(principal, route.spec.scope, route.spec.operationId);
    } catch (error) {
      return discard(req, res, error as Error);
    }

    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > maxBody) return discard(req, res, new PayloadTooLargeError(declared, maxBody));
    const body = await readBody(req, maxBody);
    // A chunked body: the size read when it crossed the limit (the rest is never read into memory).
    if (typeof body === 'number') return discard(req, res, new PayloadTooLargeError(body, maxBody));

    const event = toProxyEvent(req, method, path, url, q, route.spec.path, pathParameters, body, apiKey, stage, started, principal);
    let result: APIGatewayProxyResult;
    try {
      // A Lambda-like context too: middy handlers and Powertools middlewares read it when present.
      result = await (dispatch as (e: APIGatewayProxyEvent, c: Context) => Promise<APIGatewayProxyResult>)(
        event,
        lambdaContext(route.spec.lambda, event.requestContext.requestId, started),
      );
    } catch (error) {
      // API Gateway answers a failed Lambda integration with 502 and this body.
      logger?.error('handler threw', { error: error as Error, operationId: route.spec.operationId });
      return sendJson(res, 502, { message: 'Internal server error' });
    }
    writeResult(res, result);
  }

  return {
    server,
    listen(port, host = '127.0.0.1') {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          const address = server.address() as AddressInfo;
          resolve(`http://${host}:${address.port}`);
        });
      });
    },
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        // Keep-alive sockets that stay busy are cut after a grace period.
        setTimeout(() => server.closeAllConnections(), 2_000).unref();
      });
    },
  };
}

function compileRoutes(specs: readonly RouteSpec[]): CompiledRoute[] {
  const compiled = specs.map((spec) => {
    const segments = spec.path.split('/');
    const params: Array<[number, string]> = [];
    segments.forEach((s, i) => {
      if (s.startsWith('{') && s.endsWith('}')) params.push([i, s.slice(1, -1)]);
    });
    return { spec, segments, params };
  });
  // Literal segments win over parameters, as in API Gateway.
  return compiled.sort((a, b) => a.params.length - b.params.length);
}

function matchPath(route: CompiledRoute, path: string): Record<string, string> | undefined {
  const parts = path.split('/');
  if (parts.length !== route.segments.length) return undefined;
  let params: Record<string, string> | undefined;
  for (let i = 0; i < parts.length; i++) {
    const seg = route.segments[i]!;
    const part = parts[i]!;
    if (seg.startsWith('{') && seg.endsWith('}')) {
      if (part === '') return undefined;
      (params ??= {})[seg.slice(1, -1)] = safeDecode(part);
    } else if (seg !== part) {
      return undefined;
    }
  }
  return params ?? {};
}

function matchRoute(
  routes: CompiledRoute[],
  method: string,
  path: string,
): { route: CompiledRoute; pathParameters: Record<string, string> } | 'no-path' | 'no-method' {
  let pathSeen = false;
  for (const route of routes) {
    const params = matchPath(route, path);
    if (params === undefined) continue;
    pathSeen = true;
    if (route.spec.method === method) return { route, pathParameters: params };
  }
  return pathSeen ? 'no-method' : 'no-path';
}

/** Reads the body up to `limit` bytes; as soon as it grows past it, the byte count so far (the rest is never kept). */
function readBody(req: IncomingMessage, limit: number): Promise<string | number> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        over = true;
        chunks.length = 0;
        req.off('data', onData);
        req.off('end', onEnd);
        req.off('error', onError);
        resolve(size);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      if (over) return;
      resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, size).toString('utf8'));
    };
    const onError = (error: Error) => reject(error);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/**
 * Answers with the shared JSON error shape (`errorResult`, as the handlers do), then reads and drops whatever body
 * is left so the client can read the answer.
 */
function discard(req: IncomingMessage, res: ServerResponse, error: Error): void {
  if (!req.complete) {
    let drained = 0;
    req.on('data', (chunk: Buffer) => {
      drained += chunk.length;
      if (drained > MAX_DRAIN_BYTES) req.socket.destroy();
    });
    req.resume();
  }
  writeResult(res, errorResult(error));
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function writeResult(res: ServerResponse, result: APIGatewayProxyResult): void {
  const body = result.body ?? '';
  const bytes = result.isBase64Encoded ? Buffer.from(body, 'base64') : body;
  res.statusCode = result.statusCode;
  for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, String(value));
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) {
    res.setHeader(name, values.map((v) => String(v)));
  }
  res.setHeader('content-length', typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.length);
  res.end(bytes);
}

/** API Gateway's integration timeout, which bounds the local handler's "remaining time". */
const INTEGRATION_TIMEOUT_MS = 29_000;

function lambdaContext(functionName: string, requestId: string, started: number): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: `flywheel-local-${functionName}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:flywheel-local-${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/flywheel-local-${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, INTEGRATION_TIMEOUT_MS - (Date.now() - started)),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function toProxyEvent(
  req: IncomingMessage,
  method: string,
  path: string,
  url: string,
  q: number,
  resource: string,
  pathParameters: Record<string, string>,
  body: string,
  apiKey: string | undefined,
  stage: string,
  started: number,
  principal: Principal,
): APIGatewayProxyEvent {
  // Original header names, as API Gateway passes them; repeated headers keep every value in the multi-value map.
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    headers[name] = value;
    const list = multiValueHeaders[name];
    if (list) list.push(value);
    else multiValueHeaders[name] = [value];
  }

  let queryStringParameters: Record<string, string> | null = null;
  let multiValueQueryStringParameters: Record<string, string[]> | null = null;
  if (q !== -1 && q < url.length - 1) {
    queryStringParameters = {};
    multiValueQueryStringParameters = {};
    for (const [name, value] of new URLSearchParams(url.slice(q + 1))) {
      queryStringParameters[name] = value;
      (multiValueQueryStringParameters[name] ??= []).push(value);
    }
  }
  const hasParams = Object.keys(pathParameters).length > 0;
  const requestId = randomUUID();
  const sourceIp = req.socket.remoteAddress ?? '127.0.0.1';
  return {
    resource,
    path,
    httpMethod: method,
    headers,
    multiValueHeaders,
    queryStringParameters,
    multiValueQueryStringParameters,
    pathParameters: hasParams ? pathParameters : null,
    stageVariables: null,
    body: body === '' && (method === 'GET' || method === 'DELETE') ? null : body,
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      // What the Lambda authorizer returns on AWS (principalId and its context), read by the dispatcher.
      authorizer: { principalId: principal.keyId, ...toAuthorizerContext(principal) },
      protocol: `HTTP/${req.httpVersion}`,
      httpMethod: method,
      path: `/${stage}${path}`,
      stage,
      requestId,
      requestTimeEpoch: started,
      resourceId: 'local',
      resourcePath: resource,
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: apiKey ?? null,
        apiKeyId: apiKey === undefined ? null : 'local',
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp,
        user: null,
        userAgent: req.headers['user-agent'] ?? null,
        userArn: null,
      },
    },
  };
}
