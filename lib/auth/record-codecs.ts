/**
 * The stored records of auth (keys from `record-keys.ts`): writers `encode`, readers `decode`, and a record that does
 * not match fails where it is read, naming the record and the field.
 */
import { z } from 'zod';
import { defineRecordCodec } from '../shared/record-codec.ts';
import { apiKeyKeys } from './record-keys.ts';
import { SCOPES } from './scopes.ts';

/** An API key as stored: its hash (held by the key, not stored twice), who it acts as, and when it was revoked. */
export const StoredApiKey = z.object({
  hash: z.string(),
  kind: z.literal('apiKey'),
  /** The first 16 hex digits of the hash: names a key in `flywheel keys list|revoke` without revealing it. */
  keyId: z.string(),
  tenant: z.string(),
  scopes: z.array(z.enum(SCOPES)),
  name: z.string().optional(),
  createdAt: z.string(),
  revokedAt: z.string().optional(),
});
export type StoredApiKey = z.output<typeof StoredApiKey>;

export const apiKeyRecord = defineRecordCodec({
  kind: 'API key',
  schema: StoredApiKey,
  keys: (k) => ({ ...apiKeyKeys.key(k.hash), gsi1pk: apiKeyKeys.all, gsi1sk: apiKeyKeys.listSort(k.createdAt, k.keyId) }),
  fromKeys: (k) => ({ hash: apiKeyKeys.hashOf(k.pk) }),
});
