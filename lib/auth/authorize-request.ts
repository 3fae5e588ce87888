import { ForbiddenError } from './forbidden-error.ts';
import type { RecordsPort } from '../ports/records.ts';
import { findApiKey } from './api-keys.ts';
import { hasScope, isTenant, scopeOf, type Scope } from './scopes.ts';

/** Who a request acts as: the key's tenant and scopes. */
export interface Principal {
  tenant: string;
  scopes: Scope[];
  /** The key's id (first 16 hex digits of its SHA-256), for logs. */
  keyId: string;
}

/**
 * Checks an API key (and, when given, the scope a route needs): the key's principal, or `Flywheel.Forbidden` (403)
 * saying why: missing, unknown or revoked key, or the scope the route needs.
 *
 * @example
 * const p = await authorizeRequest(ports.records, req.headers['x-api-key'], { scope: 'admin' });
 */
export async function authorizeRequest(records: RecordsPort, key: string | undefined, route?: { scope: Scope; operationId?: string }): Promise<Principal> {
  if (key === undefined || key === '') throw new ForbiddenError('Forbidden: missing API key; send it in the x-api-key header');
  if (key.length > 512) throw new ForbiddenError('Forbidden: invalid API key');
  const record = await findApiKey(records, key);
  if (!record) throw new ForbiddenError('Forbidden: invalid API key');
  if (record.revokedAt) throw new ForbiddenError(`Forbidden: API key ${record.keyId} was revoked at ${record.revokedAt}`);
  const principal: Principal = { tenant: record.tenant, scopes: record.scopes, keyId: record.keyId };
  if (route) requireScope(principal, route.scope, route.operationId);
  return principal;
}

/** Throws 403 naming the scope when the principal lacks it. */
export function requireScope(principal: Principal, scope: Scope, operationId?: string): void {
  if (!hasScope(principal.scopes, scope)) {
    throw new ForbiddenError(
      `Forbidden: ${operationId ? `${operationId} ` : 'this route '}needs the ${scope} scope; this key has ${principal.scopes.join(', ')}`,
    );
  }
}

/**
 * The authorizer context API Gateway puts on `event.requestContext.authorizer` (REST: string values only), and that
 * the local server puts there too: one code path for the handlers.
 */
export function toAuthorizerContext(p: Principal): Record<string, string> {
  return { tenant: p.tenant, scopes: p.scopes.join(','), keyId: p.keyId };
}

/** The principal of a proxy event's authorizer context, or undefined when there is none (or it is malformed). */
export function principalOfContext(authorizer: unknown): Principal | undefined {
  if (authorizer === null || typeof authorizer !== 'object') return undefined;
  const a = authorizer as Record<string, unknown>;
  if (!isTenant(a.tenant) || typeof a.scopes !== 'string') return undefined;
  const scopes = a.scopes.split(',').flatMap((word) => scopeOf(word) ?? []);
  if (scopes.length === 0) return undefined;
  return { tenant: a.tenant, scopes, keyId: typeof a.keyId === 'string' ? a.keyId : 'unknown' };
}
