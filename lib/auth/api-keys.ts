/**
 * API keys as records of the records port (the root, never a tenant's view): a key is stored only as its SHA-256
 * (layout in `record-keys.ts`). `keyId` (the first 16 hex digits of the hash) names a key in
 * `flywheel keys list|revoke` without revealing it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { ValidationError, NotFoundError } from '../errors.ts';
import type { RecordsPort } from '../ports/records.ts';
import { apiKeyRecord, type StoredApiKey } from './record-codecs.ts';
import { apiKeyKeys } from './record-keys.ts';
import { isTenant, parseScopes, type Scope } from './scopes.ts';

export interface ApiKeyRecord {
  keyId: string;
  tenant: string;
  scopes: Scope[];
  name?: string;
  createdAt: string;
  revokedAt?: string;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** A new random key: `fw_<tenant>_<32 random bytes, base64url>` (the tenant in it is only a hint for people). */
export function newApiKey(tenant: string): string {
  return `fw_${tenant}_${randomBytes(32).toString('base64url')}`;
}

/** The key as shown: without its hash or record bookkeeping. */
function view(stored: StoredApiKey): ApiKeyRecord {
  return {
    keyId: stored.keyId,
    tenant: stored.tenant,
    scopes: stored.scopes,
    ...(stored.name !== undefined ? { name: stored.name } : {}),
    createdAt: stored.createdAt,
    ...(stored.revokedAt !== undefined ? { revokedAt: stored.revokedAt } : {}),
  };
}

/**
 * Stores a key record (the given key, or a new random one) and answers the key once: it is never stored in clear.
 *
 * @example
 * const { key } = await createApiKey(ports.records, { tenant: 'acme', scopes: ['ingest'], name: 'acme-prod' }, new Date());
 */
export async function createApiKey(
  records: RecordsPort,
  input: { tenant: string; scopes: readonly string[] | string; name?: string; key?: string },
  now: Date,
): Promise<{ key: string; record: ApiKeyRecord }> {
  if (!isTenant(input.tenant)) {
    throw new ValidationError(`Invalid tenant ${JSON.stringify(input.tenant)}: lowercase letters, digits and -, at most 63`, [{ path: 'tenant', message: 'not a tenant name' }]);
  }
  let scopes: Scope[];
  try {
    scopes = parseScopes(input.scopes);
  } catch (e) {
    throw new ValidationError((e as Error).message, [{ path: 'scopes', message: (e as Error).message }]);
  }
  const key = input.key ?? newApiKey(input.tenant);
  if (key.length < 20) throw new ValidationError('An API key has at least 20 characters', [{ path: 'key', message: 'too short' }]);
  const hash = hashApiKey(key);
  const record: ApiKeyRecord = { keyId: hash.slice(0, 16), tenant: input.tenant, scopes, ...(input.name ? { name: input.name } : {}), createdAt: now.toISOString() };
  const { written } = await records.put(apiKeyRecord.encode({ hash, kind: 'apiKey', ...record }), { condition: { kind: 'absent' } });
  if (!written) {
    const { pk, sk } = apiKeyKeys.key(hash);
    const existing = apiKeyRecord.decodeIfPresent(await records.get(pk, sk));
    // Written, then deleted before this read: the key is stored nowhere, so answer it as given.
    return { key, record: existing ? view(existing) : record };
  }
  return { key, record };
}

/** The record of a key (revoked or not), or undefined. */
export async function findApiKey(records: RecordsPort, key: string): Promise<ApiKeyRecord | undefined> {
  const { pk, sk } = apiKeyKeys.key(hashApiKey(key));
  const stored = apiKeyRecord.decodeIfPresent(await records.get(pk, sk));
  return stored ? view(stored) : undefined;
}

/** Every key, oldest first. */
export async function listApiKeys(records: RecordsPort): Promise<Array<ApiKeyRecord>> {
  const out: ApiKeyRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await records.query({ index: 'gsi1', partition: apiKeyKeys.all, limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const item of page.items) out.push(view(apiKeyRecord.decode(item)));
    cursor = page.cursor;
  } while (cursor);
  return out;
}

/** Revokes the key whose keyId is `keyId` (idempotent: the first revocation time is kept). */
export async function revokeApiKey(records: RecordsPort, keyId: string, now: Date): Promise<ApiKeyRecord> {
  let found: StoredApiKey | undefined;
  let cursor: string | undefined;
  do {
    const page = await records.query({ index: 'gsi1', partition: apiKeyKeys.all, limit: 1000, ...(cursor ? { cursor } : {}) });
    found = page.items.map((item) => apiKeyRecord.decode(item)).find((k) => k.keyId === keyId);
    cursor = page.cursor;
  } while (!found && cursor);
  if (!found) throw new NotFoundError(`no API key with id ${keyId}`);
  if (found.revokedAt !== undefined) return view(found);
  const revoked = { ...found, revokedAt: now.toISOString() };
  await records.put(apiKeyRecord.encode(revoked));
  return view(revoked);
}
