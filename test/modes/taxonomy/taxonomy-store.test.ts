import { describe, expect, it } from 'vitest';
import { DynamoDbRecords } from '../../../lib/drivers/aws/dynamodb-records.ts';
import { SqliteRecords } from '../../../lib/drivers/local/sqlite-records.ts';
import { NotFoundError } from '../../../lib/errors.ts';
import {
  ensureTaxonomy,
  listTaxonomyVersions,
  loadTaxonomy,
  reviseStoredTaxonomy,
  saveTaxonomy,
  TaxonomyConflictError,
} from '../../../lib/modes/taxonomy/taxonomy-store.ts';
import { TAXONOMY_PK, taxonomySortKey } from '../../../lib/modes/record-keys.ts';
import { defaultTaxonomy, modeIds, reviseTaxonomy } from '../../../lib/modes/taxonomy/taxonomy.ts';
import type { RecordsPort } from '../../../lib/ports/records.ts';
import { createTestTable, motoClients } from '../../support/aws-test-resources.ts';
import { localFixture } from '../../contract/local-driver-fixture.ts';

const local = localFixture();
const aws = motoClients();
const latency = { id: 'latency', name: 'Latency', definition: 'Too slow to be useful.', examples: ['took 3 minutes'] };

const drivers: [string, () => Promise<RecordsPort>][] = [
  ['SQLite', async () => new SqliteRecords(local.database('records.sqlite'))],
  ['DynamoDB (moto)', async () => new DynamoDbRecords(aws.documents, await createTestTable(aws))],
];

describe.each(drivers)('taxonomy store on %s', (_name, open) => {
  it('serves the seed before anything is stored, and stores it as version 1 on ensure', async () => {
    const records = await open();
    expect(await loadTaxonomy(records)).toEqual(defaultTaxonomy());
    expect(await records.get(TAXONOMY_PK, taxonomySortKey(1))).toBeUndefined();
    await ensureTaxonomy(records);
    expect((await records.get(TAXONOMY_PK, 'VERSION#0000000001'))?.version).toBe(1);
    expect(await listTaxonomyVersions(records)).toHaveLength(1);
  });

  it('revises into new versions while every old version stays readable', async () => {
    const records = await open();
    const v2 = await reviseStoredTaxonomy(records, { add: [latency], note: 'cluster 17' }, new Date('2026-12-02T10:00:00Z'));
    const v3 = await reviseStoredTaxonomy(records, { remove: [{ id: 'latency', mergedInto: 'other' }] }, new Date('2026-12-02T11:00:00Z'));
    expect([v2.version, v3.version]).toEqual([2, 3]);
    expect(await loadTaxonomy(records)).toEqual(v3);
    expect(modeIds(await loadTaxonomy(records, 2))).toContain('latency');
    expect(modeIds(await loadTaxonomy(records, 1))).not.toContain('latency');
    expect((await listTaxonomyVersions(records)).map((v) => [v.version, v.parentVersion ?? null, v.note ?? null])).toEqual([
      [1, null, 'Seed taxonomy: the failure modes Cursor names for its outer loop, plus "other".'],
      [2, 1, 'cluster 17'],
      [3, 2, null],
    ]);
    await expect(loadTaxonomy(records, 9)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('lets only one of two concurrent revisions of the same parent become the next version; a retry is a no-op', async () => {
    const records = await open();
    const base = await ensureTaxonomy(records);
    const a = reviseTaxonomy(base, { add: [latency] }, new Date('2026-12-02T10:00:00Z'));
    const b = reviseTaxonomy(base, { remove: [{ id: 'ui-execution' }] }, new Date('2026-12-02T10:00:01Z'));
    const results = await Promise.allSettled([saveTaxonomy(records, a), saveTaxonomy(records, b)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason).toBeInstanceOf(TaxonomyConflictError);
    expect((rejected.reason as Error).name).toBe('Flywheel.ConflictError');
    const winner = await loadTaxonomy(records, 2);
    await expect(saveTaxonomy(records, winner)).resolves.toBeUndefined();
  });
});
