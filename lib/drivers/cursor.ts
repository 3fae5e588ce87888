/**
 * Opaque, URL-safe page cursors shared by the drivers: base64url of a JSON value.
 * Drivers never trust a cursor's shape beyond what they wrote; a cursor that does not decode is a ValidationError.
 */
import { ValidationError } from '../errors.ts';

export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

export function decodeCursor<T>(cursor: string): T {
  try {
    return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as T;
  } catch {
    throw new ValidationError('Invalid cursor', [{ path: 'cursor', message: 'not a cursor this store produced' }]);
  }
}

/** Page sizes are capped at 1000 on every driver. */
export const MAX_PAGE_SIZE = 1000;

export function pageSize(limit: number | undefined): number {
  if (limit === undefined) return MAX_PAGE_SIZE;
  if (!Number.isInteger(limit) || limit < 1) {
    throw new ValidationError('Invalid limit', [{ path: 'limit', message: 'must be a positive integer' }]);
  }
  return Math.min(limit, MAX_PAGE_SIZE);
}
