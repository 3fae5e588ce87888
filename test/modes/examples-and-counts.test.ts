/**
 * What a user tripped over: `modes examples --model` came back empty while four examples of that checkpoint existed
 * (the filter ran in memory over ten pages of newer examples of other checkpoints); counts mixed people's labels,
 * confident predictions and unreviewed guesses. Local ports (SQLite), labels written by the real label writer.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import type { QueryInput } from '../../lib/ports/records.ts';
import { listModeExamples, reindexModeExamples } from '../../lib/modes/list-mode-examples.ts';
import { modeKeys } from '../../lib/modes/record-keys.ts';
import type { ModeLabel } from '../../lib/modes/mode-label.ts';
import { queryFailureModes } from '../../lib/modes/query-failure-modes.ts';
import { loadSignalByKey } from '../../lib/modes/signal.ts';
import { writeLabel } from '../../lib/modes/write-label.ts';
import { storeFeedback, tempPorts } from './support/modes-fixture.ts';

let env: { ports: LocalPorts; cleanup: () => void } | undefined;
afterEach(() => env?.cleanup());

const now = new Date('2026-12-02T12:00:00Z');
const at = (minutes: number) => new Date(now.getTime() - minutes * 60_000).toISOString();

async function labelled(ports: LocalPorts, fields: Record<string, unknown>, label: Partial<ModeLabel> & Pick<ModeLabel, 'source' | 'confidence'>): Promise<string> {
  const id = await storeFeedback(ports, fields);
  const key = `feedback:${id}`;
  const signal = (await loadSignalByKey(ports, key))!;
  await writeLabel(ports, signal, { signalKey: key, model: signal.model, modes: [{ mode: 'scope-calibration' }], taxonomyVersion: 1, labelledAt: signal.receivedAt, ...label });
  return key;
}

describe('mode examples by checkpoint', () => {
  it('finds the four examples of a checkpoint under 250 newer ones of another, paging with a cursor', { timeout: 120_000 }, async () => {
    env = tempPorts(() => now);
    const mine: string[] = [];
    for (let i = 0; i < 4; i++) mine.push(await labelled(env.ports, { model: 'ckpt-a', comment: `rewrote the whole module ${i}`, receivedAt: at(1000 + i) }, { source: 'human', confidence: 1 }));
    for (let i = 0; i < 250; i++) await labelled(env.ports, { model: 'ckpt-b', comment: `too much ${i}`, receivedAt: at(i) }, { source: 'local', confidence: 0.9 });

    const all = await listModeExamples(env.ports, 'scope-calibration', { model: 'ckpt-a' });
    expect(all.items.map((i) => i.signalKey)).toEqual([...mine]);
    expect(all.items.every((i) => i.model === 'ckpt-a')).toBe(true);

    // Pages of three: the cursor is the store's, so nothing is skipped or repeated.
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await listModeExamples(env.ports, 'scope-calibration', { model: 'ckpt-a', limit: 3, ...(cursor ? { cursor } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(3);
      seen.push(...page.items.map((i) => i.signalKey));
      cursor = page.cursor;
      pages++;
    } while (cursor && pages < 5);
    expect(seen).toEqual(mine);
    expect(pages).toBeLessThanOrEqual(3);

    const other = await listModeExamples(env.ports, 'scope-calibration', { model: 'ckpt-b', limit: 200 });
    expect(other.items).toHaveLength(200);
    expect(other.cursor).toBeDefined();
    await expect(listModeExamples(env.ports, 'scope-calibration', { model: '', limit: 3 })).rejects.toThrow(/Invalid request/);
  });

  it('finds examples stored before the index once they are reindexed', async () => {
    env = tempPorts(() => now);
    const key = await labelled(env.ports, { model: 'ckpt-old', comment: 'rewrote it all', receivedAt: at(5) }, { source: 'human', confidence: 1 });
    // As an example was stored before: no index keys.
    const k = modeKeys.example('scope-calibration', at(5), key);
    const { gsi1pk: _p, gsi1sk: _s, ...old } = (await env.ports.records.get(k.pk, k.sk))!;
    await env.ports.records.delete(k.pk, k.sk);
    await env.ports.records.put(old as typeof old & { pk: string; sk: string });
    expect((await listModeExamples(env.ports, 'scope-calibration', { model: 'ckpt-old' })).items).toEqual([]);
    expect(await reindexModeExamples(env.ports)).toMatchObject({ scanned: 1, reindexed: 1 });
    expect((await listModeExamples(env.ports, 'scope-calibration', { model: 'ckpt-old' })).items.map((i) => i.signalKey)).toEqual([key]);
    expect(await reindexModeExamples(env.ports)).toMatchObject({ scanned: 1, reindexed: 0 });
  });
});

describe('failure-mode counts', () => {
  it("separate people's labels, confident predictions and unreviewed guesses", async () => {
    env = tempPorts(() => now);
    const m = { model: 'ckpt-c' };
    await labelled(env.ports, { ...m, comment: 'a', receivedAt: at(1) }, { source: 'human', confidence: 1, labelledBy: 'ana' });
    await labelled(env.ports, { ...m, comment: 'b', receivedAt: at(2) }, { source: 'human', confidence: 1, labelledBy: 'ana' });
    await labelled(env.ports, { ...m, comment: 'c', receivedAt: at(3) }, { source: 'judge', confidence: 0.92 });
    await labelled(env.ports, { ...m, comment: 'd', receivedAt: at(4) }, { source: 'local', confidence: 0.81 });
    // Guesses: a judge below the confident line, and a local label waiting for a person.
    await labelled(env.ports, { ...m, comment: 'e', receivedAt: at(5) }, { source: 'judge', confidence: 0.4, review: { reason: 'judge-low-confidence', detail: 'low' } });
    await labelled(env.ports, { ...m, comment: 'f', receivedAt: at(6) }, { source: 'local', confidence: 0.7, review: { reason: 'local-unsure', detail: 'no judge' } });
    await labelled(env.ports, { ...m, comment: 'g', receivedAt: at(7) }, { source: 'local', confidence: 0.3 });

    // The pending review queue is not read per query (it may hold every unreviewed signal of every checkpoint): only
    // the window's confident rows are looked up, one review item each.
    const queried: string[] = [];
    const records = env.ports.records;
    const ports = {
      now: env.ports.now,
      records: {
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
    const r = await queryFailureModes(ports, { model: 'ckpt-c' });
    expect(queried).not.toContain(modeKeys.reviewQueue('pending'));
    const scope = r.checkpoints[0]!.modes.find((x) => x.mode === 'scope-calibration')!;
    expect(scope.count).toBe(7);
    expect(scope.byLabel).toEqual({ people: 2, confident: 2, unreviewed: 3 });
    expect(r.checkpoints[0]!.totals.labelKinds).toEqual({ people: 2, confident: 2, unreviewed: 3 });
    expect(r.checkpoints[0]!.modes.find((x) => x.mode === 'communication')!.byLabel).toEqual({ people: 0, confident: 0, unreviewed: 0 });
  });
});
