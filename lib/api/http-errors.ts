import { ErrorNames, FlywheelError } from '../errors.ts';
import { AuthErrorNames } from '../auth/forbidden-error.ts';
import { ModesErrorNames } from '../modes/modes-errors.ts';

/** The names of the HTTP shell's errors, as a response body's `error`, API Gateway's responses and a log query spell them. */
export const HttpErrorNames = {
  payloadTooLarge: 'Flywheel.PayloadTooLarge',
  unsupportedMediaType: 'Flywheel.UnsupportedMediaType',
  malformedJson: 'Flywheel.MalformedJson',
  routeNotFound: 'Flywheel.RouteNotFound',
  methodNotAllowed: 'Flywheel.MethodNotAllowed',
  unauthorized: 'Flywheel.Unauthorized',
  throttled: 'Flywheel.Throttled',
  /** API Gateway's own 4xx/5xx that no route answered (lib/constructs/route-table-api.ts). */
  gateway: 'Flywheel.GatewayError',
  /** The body of a 500: what failed is logged, never answered. */
  internal: 'Flywheel.InternalError',
} as const;

/** The body is larger than the route accepts (413). */
export class PayloadTooLargeError extends FlywheelError {
  readonly limitBytes: number;
  constructor(sizeBytes: number, limitBytes: number) {
    super(HttpErrorNames.payloadTooLarge, `Request body is ${sizeBytes} bytes; the limit is ${limitBytes} bytes`);
    this.limitBytes = limitBytes;
  }
}

/** The body is not declared as JSON (415). */
export class UnsupportedMediaTypeError extends FlywheelError {
  constructor(contentType: string | undefined) {
    super(
      HttpErrorNames.unsupportedMediaType,
      `Content-Type must be application/json (optionally with a charset); got ${contentType === undefined ? 'none' : JSON.stringify(contentType)}`,
    );
  }
}

/** The body is not parseable JSON (400). */
export class MalformedJsonError extends FlywheelError {
  constructor(detail: string) {
    super(HttpErrorNames.malformedJson, `Request body is not valid JSON: ${detail}`);
  }
}

/** No route has this method and path (404), or the path exists with other methods (405). */
export class RouteNotFoundError extends FlywheelError {
  constructor(method: string, path: string) {
    super(HttpErrorNames.routeNotFound, `No route for ${method} ${path}`);
  }
}
export class MethodNotAllowedError extends FlywheelError {
  readonly allow: string[];
  constructor(method: string, path: string, allow: string[]) {
    super(HttpErrorNames.methodNotAllowed, `${method} is not allowed on ${path}; allowed: ${allow.join(', ')}`);
    this.allow = allow;
  }
}

/**
 * Missing API key (401), over the rate limit (429): API Gateway answers these on AWS; the local server uses the same
 * names. A key not valid for the route (403) is auth's `ForbiddenError` (`lib/auth/forbidden-error.ts`).
 */
export class UnauthorizedError extends FlywheelError {
  constructor(message = 'Missing API key: send it in the x-api-key header') {
    super(HttpErrorNames.unauthorized, message);
  }
}
export class ThrottledError extends FlywheelError {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super(HttpErrorNames.throttled, `Too many requests; retry after ${retryAfterSeconds} s`);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** HTTP status of each namespaced error; anything else is a 500. */
export const ERROR_STATUS: Readonly<Record<string, number>> = {
  [ErrorNames.validation]: 400,
  [HttpErrorNames.malformedJson]: 400,
  [HttpErrorNames.unauthorized]: 401,
  [AuthErrorNames.forbidden]: 403,
  [ErrorNames.notFound]: 404,
  [HttpErrorNames.routeNotFound]: 404,
  [HttpErrorNames.methodNotAllowed]: 405,
  [HttpErrorNames.payloadTooLarge]: 413,
  [HttpErrorNames.unsupportedMediaType]: 415,
  [HttpErrorNames.throttled]: 429,
  [ErrorNames.transient]: 503,
  [ErrorNames.conflict]: 409,
  [ModesErrorNames.modelNotConfigured]: 503,
};
