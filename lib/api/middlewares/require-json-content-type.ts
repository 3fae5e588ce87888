import { UnsupportedMediaTypeError } from '../http-errors.ts';
import { header, type HttpMiddleware } from './http-event.ts';

/** `application/json`, optionally with parameters such as `; charset=utf-8` (case-insensitive). */
const JSON_MEDIA_TYPE = /^\s*application\/json\s*(;.*)?$/i;

/**
 * Refuses a request whose Content-Type is not JSON with 415. Parameters are allowed, but a charset must be UTF-8
 * (JSON is UTF-8 by RFC 8259).
 */
export function requireJsonContentType(): HttpMiddleware {
  return {
    name: 'requireJsonContentType',
    before: (request) => {
      const contentType = header(request.event, 'content-type');
      if (contentType === undefined || !JSON_MEDIA_TYPE.test(contentType)) throw new UnsupportedMediaTypeError(contentType);
      const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1];
      if (charset !== undefined && !/^utf-?8$/i.test(charset)) throw new UnsupportedMediaTypeError(contentType);
    },
  };
}
