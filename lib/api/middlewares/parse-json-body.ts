import { MalformedJsonError } from '../http-errors.ts';
import type { HttpMiddleware } from './http-event.ts';

/** Parses the body into `event.jsonBody`; a body that is absent or not JSON is a 400. */
export function parseJsonBody(): HttpMiddleware {
  return {
    name: 'parseJsonBody',
    before: (request) => {
      const { body, isBase64Encoded } = request.event;
      if (body === null || body === undefined || body === '') throw new MalformedJsonError('the body is empty');
      const text = isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body;
      try {
        request.event.jsonBody = JSON.parse(text);
      } catch (err) {
        throw new MalformedJsonError((err as Error).message);
      }
    },
  };
}
