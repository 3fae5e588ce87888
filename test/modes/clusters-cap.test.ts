/**
 * Clustering reads the window newest day first and stops once it holds the cap of non-praise comments: older days
 * are never read (their partitions never queried), and the comments clustered are the newest ones.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import type { QueryInput } from '../../lib/ports/records.ts';
import { clusterComments } from '../../lib/modes/clusters/cluster-comments.ts';
import { embeddingRecord } from '../../lib/modes/record-codecs.ts';
import { modeKeys } from '../../lib/modes/record-keys.ts';
import { tempPorts } from './support/modes-fixture.ts';

let env: { ports: LocalPorts; cleanup: () => void } | undefined;
afterEach(() => env?.cleanup());

const vector = (xs: number[]) => Buffer.from(new Float32Array(xs).buffer).toString('base64');

describe('clustering under the cap', () => {
  it('reads days newest to oldest and stops at the cap before reading older days', async () => {
    const now = new Date('2026-12-10T12:00:00Z');
    env = tempPorts(() => now);
    // Three days of eight comments each: two tight groups per day.
    const items = [];
    for (const day of ['2026-12-08', '2026-12-09', '2026-12-10']) {
      for (let i = 0; i < 8; i++) {
        const signalKey = `feedback:${day}-${i}`;
        const g = i % 2;
        items.push(
          embeddingRecord.encode({
            signalKey,
            model: 'ckpt-a',
            receivedAt: `${day}T0${i}:00:00.000Z`,
            embeddingModel: 'embed',
            vector: vector(g === 0 ? [1, 0.01 * i, 0, 0] : [0, 0, 1, 0.01 * i]),
            text: `comment ${signalKey}`,
            modes: ['other'],
            labelSource: 'human',
            confidence: 1,
          }),
        );
      }
    }
    await env.ports.records.putMany(items);
    const queried: string[] = [];
    const records = env.ports.records;
    const ports = {
      now: env.ports.now,
      records: {
        ...records,
        put: records.put.bind(records),
        putMany: records.putMany.bind(records),
        get: records.get.bind(records),
        delete: records.delete.bind(records),
        query: (q: QueryInput) => {
          queried.push(q.partition);
          return records.query(q);
        },
      },
    };
    const r = await clusterComments(ports, { since: '2026-12-01T00:00:00Z', until: now.toISOString(), minClusterSize: 3 }, { maxComments: 12 });
    expect(r.comments).toBe(12);
    expect(r.truncatedTo).toBe(12);
    // The newest day whole, then the newest four of the day before; the oldest day is never read.
    const members = r.clusters.flatMap((c) => c.members.map((m) => m.signalKey));
    expect(members.length + r.noise).toBe(12);
    expect(members.every((k) => k.startsWith('feedback:2026-12-10') || /feedback:2026-12-09-[4-7]/.test(k))).toBe(true);
    expect(queried).toContain(modeKeys.embeddingDay('2026-12-10'));
    expect(queried).toContain(modeKeys.embeddingDay('2026-12-09'));
    expect(queried).not.toContain(modeKeys.embeddingDay('2026-12-08'));
    expect(queried).not.toContain(modeKeys.embeddingDay('2026-12-01'));
    // Under the cap, everything in the window is read and nothing is truncated.
    const all = await clusterComments(env.ports, { since: '2026-12-01T00:00:00Z', until: now.toISOString(), minClusterSize: 3 }, { maxComments: 100 });
    expect(all.comments).toBe(24);
    expect(all.truncatedTo).toBeUndefined();
  });
});
