import { PayloadTooLargeError } from '../http-errors.ts';
import type { HttpMiddleware } from './http-event.ts';

/**
 * Refuses a body over `maxBytes` with 413 before anything parses it (the limit is in the message).
 *
 * @example
 * middy(handler).use(bodySizeLimit(5 * 1024 * 1024));
 */
export function bodySizeLimit(maxBytes: number): HttpMiddleware {
  return {
    name: 'bodySizeLimit',
    before: (request) => {
      const { body, isBase64Encoded } = request.event;
      if (!body) return;
      let size: number;
      if (isBase64Encoded) {
        const pad = body.endsWith('==') ? 2 : body.endsWith('=') ? 1 : 0;
        size = Math.floor((body.length * 3) / 4) - pad;
      } else {
        // n UTF-16 units encode to at most 3n bytes: count exactly only when it could matter.
        size = body.length * 3 <= maxBytes ? body.length : Buffer.byteLength(body, 'utf8');
      }
      if (size > maxBytes) throw new PayloadTooLargeError(size, maxBytes);
    },
  };
}
