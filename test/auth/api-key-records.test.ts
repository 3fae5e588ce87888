import { describe, expect, it } from 'vitest';
import { createApiKey, findApiKey, hashApiKey, listApiKeys } from '../../lib/auth/api-keys.ts';
import { authorizeRequest } from '../../lib/auth/authorize-request.ts';
import { apiKeyKeys } from '../../lib/auth/record-keys.ts';
import { SqliteRecords } from '../../lib/drivers/local/sqlite-records.ts';
import { MalformedRecordError } from '../../lib/shared/record-codec.ts';
import { localFixture } from '../contract/local-driver-fixture.ts';

const local = localFixture();
const KEY = 'fw_acme_0123456789abcdefghij';

describe('API key records', () => {
  it('store the hash only in the key and read back as created', async () => {
    const records = new SqliteRecords(local.database('records.sqlite'));
    const { record } = await createApiKey(records, { tenant: 'acme', scopes: 'ingest,read', name: 'acme-ci', key: KEY }, new Date('2026-12-02T10:00:00Z'));
    const [stored] = (await records.query({ index: 'gsi1', partition: apiKeyKeys.all })).items;
    expect(stored).toMatchObject({ ...apiKeyKeys.key(hashApiKey(KEY)), kind: 'apiKey', keyId: record.keyId, tenant: 'acme', scopes: ['ingest', 'read'] });
    expect(stored).not.toHaveProperty('hash');
    expect(await findApiKey(records, KEY)).toEqual(record);
    expect(await listApiKeys(records)).toEqual([record]);
  });

  it('a stored key with an unknown scope fails where it is read, naming the record and the field', async () => {
    const records = new SqliteRecords(local.database('records.sqlite'));
    await createApiKey(records, { tenant: 'acme', scopes: 'read', key: KEY }, new Date('2026-12-02T10:00:00Z'));
    const [stored] = (await records.query({ index: 'gsi1', partition: apiKeyKeys.all })).items;
    await records.put({ ...stored!, scopes: ['read', 'root'] });
    const read = authorizeRequest(records, KEY);
    await expect(read).rejects.toBeInstanceOf(MalformedRecordError);
    await expect(read).rejects.toMatchObject({ pk: stored!.pk, sk: 'KEY', field: 'scopes.1' });
    await expect(read).rejects.toThrow(/^API key record APIKEY#[0-9a-f]{64} \/ KEY: field "scopes\.1"/);
  });
});
