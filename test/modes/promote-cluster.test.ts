/**
 * Promotion on local ports: a retry after a crash finishes the same promotion (never a second version), ids are
 * never reused, and a cluster with no consented text needs examples from the person.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { clusterPromotionRecord, clusterRecord } from '../../lib/modes/record-codecs.ts';
import { modeKeys } from '../../lib/modes/record-keys.ts';
import { listSuggestedLabels, loadTaxonomyMapping, promoteCluster } from '../../lib/modes/taxonomy/promote-cluster.ts';
import { listTaxonomyVersions } from '../../lib/modes/taxonomy/taxonomy-store.ts';
import { cluster, tempPorts } from './support/modes-fixture.ts';

let env: { ports: LocalPorts; cleanup: () => void } | undefined;
afterEach(() => env?.cleanup());

const base = { id: 'slow-answers', name: 'Slow answers', definition: 'Answers take minutes.', promotedBy: 'ana' };

describe('promoting a cluster', () => {
  it('finishes a half-done promotion on retry instead of making another version', async () => {
    env = tempPorts(() => new Date('2026-12-02T12:00:00Z'));
    const c = cluster('cl-aaaaaaaaaaaa', [{ signalKey: 'feedback:1', text: 'so slow today' }, { signalKey: 'feedback:2', text: 'it took minutes' }, { signalKey: 'feedback:3' }]);
    await env.ports.records.put(clusterRecord.encode(c));
    const body = { ...base, membersHash: c.membersHash };
    const first = await promoteCluster(env.ports, c.id, body);
    expect(first.taxonomy.version).toBe(2);
    expect(first.taxonomy.mode.examples).toEqual(['so slow today', 'it took minutes']);
    // As if the process died after storing the version: no mapping, the claim not marked done, cluster not marked.
    const m = modeKeys.taxonomyMapping(1, 2);
    await env.ports.records.delete(m.pk, m.sk);
    await env.ports.records.put(clusterRecord.encode(c));
    await env.ports.records.put(clusterPromotionRecord.encode({ clusterId: c.id, mode: body.id, membersHash: c.membersHash, promotedBy: body.promotedBy, claimedAt: '2026-12-02T12:00:00.000Z' }));
    const retry = await promoteCluster(env.ports, c.id, body);
    expect(retry.taxonomy.version).toBe(2);
    expect((await listTaxonomyVersions(env.ports.records)).map((v) => v.version)).toEqual([1, 2]);
    expect((await loadTaxonomyMapping(env.ports.records, 1, 2))?.suggestedLabels).toBe(3);
    expect((await listSuggestedLabels(env.ports.records, 'slow-answers')).items).toHaveLength(3);
  });

  it('never reuses a mode id, and needs examples when no member consented', async () => {
    env = tempPorts(() => new Date('2026-12-02T12:00:00Z'));
    const a = cluster('cl-bbbbbbbbbbbb', [{ signalKey: 'feedback:1', text: 'so slow' }]);
    const b = cluster('cl-cccccccccccc', [{ signalKey: 'feedback:2' }, { signalKey: 'feedback:3' }]);
    await env.ports.records.putMany([clusterRecord.encode(a), clusterRecord.encode(b)]);
    const body = { ...base, membersHash: b.membersHash };
    await promoteCluster(env.ports, a.id, { ...base, membersHash: a.membersHash });
    await expect(promoteCluster(env.ports, b.id, body)).rejects.toMatchObject({ issues: [{ path: 'examples', message: expect.stringContaining('training consent') }] });
    await expect(promoteCluster(env.ports, b.id, { ...body, examples: ['slow again'] })).rejects.toMatchObject({ issues: [{ path: 'add.0.id', message: expect.stringContaining('already a live mode') }] });
    const ok = await promoteCluster(env.ports, b.id, { ...body, id: 'timeouts', examples: ['requests time out'] });
    expect(ok.taxonomy).toMatchObject({ version: 3, parentVersion: 2, mode: { id: 'timeouts', examples: ['requests time out'] } });
    expect(ok.mapping.modes['slow-answers']).toBe('slow-answers');
    await expect(promoteCluster(env.ports, 'cl-nope', body)).rejects.toMatchObject({ name: 'Flywheel.NotFoundError' });
    await expect(promoteCluster(env.ports, a.id, { ...base, membersHash: a.membersHash, promotedBy: '' })).rejects.toMatchObject({ issues: [expect.objectContaining({ path: 'promotedBy' })] });
  });
});
