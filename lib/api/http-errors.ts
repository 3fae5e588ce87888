import { FlywheelError } from '../errors.ts';

/** The body is larger than the route accepts (413). */
export class PayloadTooLargeError extends FlywheelError {
  readonly limitBytes: number;
  constructor(sizeBytes: number, limitBytes: number) {
    super('PayloadTooLarge', `Request body is ${sizeBytes} bytes; the limit is ${limitBytes} bytes`);
    this.limitBytes = limitBytes;
  }
}

/** The body is not declared as JSON (415). */
export class UnsupportedMediaTypeError extends FlywheelError {
  constructor(contentType: string | undefined) {
    super(
      'UnsupportedMediaType',
      `Content-Type must be application/json (optionally with a charset); got ${contentType === undefined ? 'none' : JSON.stringify(contentType)}`,
    );
  }
}

/** The body is not parseable JSON (400). */
export class MalformedJsonError extends FlywheelError {
  constructor(detail: string) {
    super('MalformedJson', `Request body is not valid JSON: ${detail}`);
  }
}

/** No route has this method and path (404), or the path exists with other methods (405). */
export class RouteNotFoundError extends FlywheelError {
  constructor(method: string, path: string) {
    super('RouteNotFound', `No route for ${method} ${path}`);
  }
}
export class MethodNotAllowedError extends FlywheelError {
  readonly allow: string[];
  constructor(method: string, path: string, allow: string[]) {
    super('MethodNotAllowed', `${method} is not allowed on ${path}; allowed: ${allow.join(', ')}`);
    this.allow = allow;
  }
}

/**
 * Missing API key (401), over the rate limit (429): API Gateway answers these on AWS; the local server uses the same
 * names. A key not valid for the route (403) is auth's `ForbiddenError` (`lib/auth/forbidden-error.ts`).
 */
export class UnauthorizedError extends FlywheelError {
  constructor(message = 'Missing API key: send it in the x-api-key header') {
    super('Unauthorized', message);
  }
}
export class ThrottledError extends FlywheelError {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super('Throttled', `Too many requests; retry after ${retryAfterSeconds} s`);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** HTTP status of each namespaced error; anything else is a 500. */
export const ERROR_STATUS: Readonly<Record<string, number>> = {
  'Flywheel.ValidationError': 400,
  'Flywheel.MalformedJson': 400,
  'Flywheel.Unauthorized': 401,
  'Flywheel.Forbidden': 403,
  'Flywheel.NotFoundError': 404,
  'Flywheel.RouteNotFound': 404,
  'Flywheel.MethodNotAllowed': 405,
  'Flywheel.PayloadTooLarge': 413,
  'Flywheel.UnsupportedMediaType': 415,
  'Flywheel.Throttled': 429,
  'Flywheel.TransientError': 503,
  'Flywheel.ConflictError': 409,
  'Flywheel.ModelNotConfigured': 503,
};
