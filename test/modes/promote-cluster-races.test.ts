/**
 * Promotion races on local ports: clustering that runs while a promotion finishes never erases it; of two
 * promotions of one cluster exactly one wins (the other is a 409 before any taxonomy is saved); and a promotion names
 * the members it saw (`membersHash` from the clustering), refused (409) once the cluster's members changed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import type { PutOptions, RecordItem, RecordsPort } from '../../lib/ports/records.ts';
import { clusterComments } from '../../lib/modes/clusters/cluster-comments.ts';
import { clusterRecord, embeddingRecord } from '../../lib/modes/record-codecs.ts';
import { modeKeys, TAXONOMY_PK, taxonomySortKey } from '../../lib/modes/record-keys.ts';
import { promoteCluster } from '../../lib/modes/taxonomy/promote-cluster.ts';
import { listTaxonomyVersions } from '../../lib/modes/taxonomy/taxonomy-store.ts';
import { tempPorts } from './support/modes-fixture.ts';

let env: { ports: LocalPorts; cleanup: () => void } | undefined;
afterEach(() => env?.cleanup());

const NOW = new Date('2026-12-10T12:00:00Z');
const vector = (xs: number[]) => Buffer.from(new Float32Array(xs).buffer).toString('base64');

/** Two tight groups of five comments. */
async function seed(ports: LocalPorts, extra = 0) {
  const items = [];
  for (let i = 0; i < 10 + extra; i++) {
    const g = i < 10 ? i % 2 : 0;
    items.push(
      embeddingRecord.encode({
        signalKey: `feedback:c-${String(i).padStart(2, '0')}`,
        model: 'ckpt-a',
        receivedAt: new Date(NOW.getTime() - (20 - i) * 3_600_000).toISOString(),
        embeddingModel: 'embed',
        vector: vector(g === 0 ? [1, 0.01 * i, 0, 0] : [0, 0, 1, 0.01 * i]),
        text: `comment ${i}`,
        modes: ['other'],
        labelSource: 'human',
        confidence: 1,
      }),
    );
  }
  await ports.records.putMany(items);
}

/** The records port with a hook that runs before (or after) a matching write. */
function hooked(records: RecordsPort, match: (item: RecordItem) => boolean, hook: () => Promise<void>, when: 'before' | 'after'): RecordsPort {
  let fired = false;
  const fire = async (items: RecordItem[], write: () => Promise<void>) => {
    const hit = !fired && items.some(match);
    if (hit) fired = true;
    if (hit && when === 'before') await hook();
    await write();
    if (hit && when === 'after') await hook();
  };
  return {
    get: (pk, sk) => records.get(pk, sk),
    query: (q) => records.query(q),
    delete: (pk, sk) => records.delete(pk, sk),
    putMany: async (items) => fire(items, () => records.putMany(items)),
    put: async (item: RecordItem, options?: PutOptions) => {
      let r = { written: false };
      await fire([item], async () => {
        r = await records.put(item, options);
      });
      return r;
    },
  };
}

const mode = (id: string) => ({ id, name: `Mode ${id}`, definition: 'Something recurring.', promotedBy: 'ana', examples: ['an example'] });

describe('cluster promotion races', () => {
  it('clustering while a promotion finishes does not erase the promotion', async () => {
    env = tempPorts(() => NOW);
    await seed(env.ports);
    const first = await clusterComments(env.ports, { minClusterSize: 3 });
    expect(first.clusters).toHaveLength(2);
    const c = first.clusters[0]!;
    expect(c.membersHash).toMatch(/^[0-9a-f]{32}$/);
    const raw = env.ports;
    // The promotion runs to its end between clustering reading the cluster record and writing it back.
    const records = hooked(
      raw.records,
      (item) => item.pk === modeKeys.cluster(c.id).pk && item.sk === 'CLUSTER',
      async () => {
        await promoteCluster(raw, c.id, { ...mode('mode-one'), membersHash: c.membersHash });
      },
      'before',
    );
    const again = await clusterComments({ records, now: raw.now }, { minClusterSize: 3 });
    expect(again.clusters.find((x) => x.id === c.id)?.promoted).toMatchObject({ mode: 'mode-one', taxonomyVersion: 2 });
    const k = modeKeys.cluster(c.id);
    expect(clusterRecord.decode((await raw.records.get(k.pk, k.sk))!).promoted).toMatchObject({ mode: 'mode-one' });
    // And it stays promoted: another promotion is a 409.
    await expect(promoteCluster(raw, c.id, { ...mode('mode-two'), membersHash: c.membersHash })).rejects.toMatchObject({ name: 'Flywheel.ConflictError' });
    const third = await clusterComments(raw, { minClusterSize: 3 });
    expect(third.clusters.find((x) => x.id === c.id)?.promoted).toMatchObject({ mode: 'mode-one' });
  });

  it('of two promotions of one cluster exactly one wins, even when the second starts after the first saved its taxonomy', async () => {
    env = tempPorts(() => NOW);
    await seed(env.ports);
    const c = (await clusterComments(env.ports, { minClusterSize: 3 })).clusters[0]!;
    const raw = env.ports;
    let second: unknown;
    const records = hooked(
      raw.records,
      (item) => item.pk === TAXONOMY_PK && item.sk === taxonomySortKey(2),
      async () => {
        second = await promoteCluster(raw, c.id, { ...mode('mode-b'), membersHash: c.membersHash }).catch((e: unknown) => e);
      },
      'after',
    );
    const first = await promoteCluster({ records, now: raw.now }, c.id, { ...mode('mode-a'), membersHash: c.membersHash });
    expect(first.taxonomy.version).toBe(2);
    expect(second).toMatchObject({ name: 'Flywheel.ConflictError', message: expect.stringContaining('mode-a') });
    expect((await listTaxonomyVersions(raw.records)).map((v) => v.version)).toEqual([1, 2]);
    // Concurrent ones too: one 201, one 409.
    const d = (await clusterComments(raw, { minClusterSize: 3 })).clusters.find((x) => x.id !== c.id)!;
    const both = await Promise.allSettled([
      promoteCluster(raw, d.id, { ...mode('mode-c'), membersHash: d.membersHash }),
      promoteCluster(raw, d.id, { ...mode('mode-d'), membersHash: d.membersHash }),
    ]);
    expect(both.filter((b) => b.status === 'fulfilled')).toHaveLength(1);
    expect(both.filter((b) => b.status === 'rejected').map((b) => (b as PromiseRejectedResult).reason)).toMatchObject([{ name: 'Flywheel.ConflictError' }]);
    expect((await listTaxonomyVersions(raw.records)).map((v) => v.version)).toEqual([1, 2, 3]);
  });

  it('refuses a promotion whose members hash is not the cluster\'s members now, and requires one', async () => {
    env = tempPorts(() => NOW);
    await seed(env.ports);
    const c = (await clusterComments(env.ports, { minClusterSize: 3 })).clusters.find((x) => x.members.some((m) => m.signalKey === 'feedback:c-00'))!;
    await expect(promoteCluster(env.ports, c.id, mode('mode-a'))).rejects.toMatchObject({ name: 'Flywheel.ValidationError', issues: [expect.objectContaining({ path: 'membersHash' })] });
    // A new member joins the same cluster (same earliest member, so the same id), after the person looked.
    await seed(env.ports, 1);
    const now = (await clusterComments(env.ports, { minClusterSize: 3 })).clusters.find((x) => x.id === c.id)!;
    expect(now.count).toBe(c.count + 1);
    expect(now.membersHash).not.toBe(c.membersHash);
    await expect(promoteCluster(env.ports, c.id, { ...mode('mode-a'), membersHash: c.membersHash })).rejects.toMatchObject({
      name: 'Flywheel.ConflictError',
      message: expect.stringContaining('members changed'),
    });
    expect(await listTaxonomyVersions(env.ports.records)).toEqual([]);
    const ok = await promoteCluster(env.ports, c.id, { ...mode('mode-a'), membersHash: now.membersHash });
    expect(ok.suggestedLabels.count).toBe(now.count);
  });
});
