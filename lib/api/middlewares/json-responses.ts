import { errorResult, toProxyResult, type HttpResult } from '../json-response.ts';
import type { HttpMiddleware } from './http-event.ts';

/**
 * Serialises the handler's `HttpResult` as JSON (after), and turns any error, from a middleware or the handler,
 * into the error body and its status (onError). Used first, so it wraps every other middleware.
 */
export function jsonResponses(): HttpMiddleware {
  return {
    name: 'jsonResponses',
    after: (request) => {
      const r = request.response as HttpResult | undefined;
      if (r) request.response = toProxyResult(r);
    },
    onError: (request) => {
      request.response = errorResult(request.error);
    },
  };
}
