/**
 * The record layout of API keys, in one place so writers and readers agree. Keys live in the root records (never a
 * tenant's view); a key is stored only as its SHA-256.
 *
 * | item | pk | sk | gsi1 |
 * | --- | --- | --- | --- |
 * | key | `APIKEY#<sha256 hex of the key>` | `KEY` | `APIKEYS` / `<createdAt>#<keyId>` |
 */
export const apiKeyKeys = {
  key: (hash: string) => ({ pk: `APIKEY#${hash}`, sk: 'KEY' }),
  /** The hash a key's partition (`APIKEY#<hash>`) names. */
  hashOf: (pk: string) => pk.slice('APIKEY#'.length),
  all: 'APIKEYS',
  /** Sort key of the listing: oldest first. */
  listSort: (createdAt: string, keyId: string) => `${createdAt}#${keyId}`,
} as const;
