/**
 * What the records port promises, on every driver: an item is identified by pk+sk and read back exactly as
 * written; `absent` writes only a new key and `absentOrOlder` only over an item whose field is strictly less;
 * `unchanged` only over the item as it was read;
 * a failed condition reports `written: false` and changes nothing; queries select one partition of the table,
 * `gsi1` or `gsi2` (sparse: only items with both index keys), filter the sort key by prefix, range or bound, order
 * it by UTF-8 bytes (either direction), and page with an opaque cursor that is present only when more items follow,
 * so paging visits every item exactly once.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { QueryInput, RecordItem, RecordsPort } from '../../lib/ports/records.ts';

async function queryAll(port: RecordsPort, input: QueryInput): Promise<{ items: RecordItem[]; pages: number }> {
  const items: RecordItem[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await port.query({ ...input, ...(cursor ? { cursor } : {}) });
    items.push(...page.items);
    cursor = page.cursor;
    pages++;
    if (cursor !== undefined) expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
  } while (cursor !== undefined && pages < 1000);
  return { items, pages };
}

const INDEXES = [
  { index: 'table', partition: 'pk', sort: 'sk' },
  { index: 'gsi1', partition: 'gsi1pk', sort: 'gsi1sk' },
  { index: 'gsi2', partition: 'gsi2pk', sort: 'gsi2sk' },
] as const;

export function describeRecordsContract(name: string, makePort: () => Promise<RecordsPort>): void {
  describe(`records contract: ${name}`, () => {
    let port: RecordsPort;
    beforeEach(async () => {
      port = await makePort();
    });

    it('returns undefined for a missing item', async () => {
      expect(await port.get('NOPE#1', 'EVENT')).toBeUndefined();
    });

    it('reads an item back exactly as written, and overwrites without a condition', async () => {
      const item = {
        pk: 'FEEDBACK#e1',
        sk: 'EVENT',
        rating: 'up',
        count: 3,
        score: 0.25,
        consent: false,
        tags: ['a', 'b'],
        context: { repo: 'x/y', nested: { depth: 2 } },
      };
      expect(await port.put(item)).toEqual({ written: true });
      expect(await port.get('FEEDBACK#e1', 'EVENT')).toEqual(item);
      expect(await port.put({ ...item, rating: 'down' })).toEqual({ written: true });
      expect((await port.get('FEEDBACK#e1', 'EVENT'))?.rating).toBe('down');
      expect(await port.get('FEEDBACK#e1', 'OTHER')).toBeUndefined();
    });

    it('writes with condition absent only when the key is new', async () => {
      const first = await port.put({ pk: 'FEEDBACK#e2', sk: 'EVENT', n: 1 }, { condition: { kind: 'absent' } });
      const second = await port.put({ pk: 'FEEDBACK#e2', sk: 'EVENT', n: 2 }, { condition: { kind: 'absent' } });
      const otherSk = await port.put({ pk: 'FEEDBACK#e2', sk: 'VOTE', n: 3 }, { condition: { kind: 'absent' } });
      expect([first.written, second.written, otherSk.written]).toEqual([true, false, true]);
      expect((await port.get('FEEDBACK#e2', 'EVENT'))?.n).toBe(1);
    });

    it('lets exactly one of several concurrent absent puts of a key win', async () => {
      const results = await Promise.all(
        Array.from({ length: 5 }, (_, n) => port.put({ pk: 'FEEDBACK#race', sk: 'EVENT', n }, { condition: { kind: 'absent' } })),
      );
      expect(results.filter((r) => r.written)).toHaveLength(1);
      const winner = results.findIndex((r) => r.written);
      expect((await port.get('FEEDBACK#race', 'EVENT'))?.n).toBe(winner);
    });

    it('writes with condition absentOrOlder when absent or strictly older (strings and numbers)', async () => {
      const key = { pk: 'VOTE#k', sk: 'LATEST' };
      const at = (t: string) => ({ condition: { kind: 'absentOrOlder' as const, field: 'occurredAt', value: t } });
      expect((await port.put({ ...key, occurredAt: '2026-12-02T10:00:00Z', v: 'a' }, at('2026-12-02T10:00:00Z'))).written).toBe(true);
      expect((await port.put({ ...key, occurredAt: '2026-12-02T11:00:00Z', v: 'b' }, at('2026-12-02T11:00:00Z'))).written).toBe(true);
      expect((await port.put({ ...key, occurredAt: '2026-12-02T09:00:00Z', v: 'c' }, at('2026-12-02T09:00:00Z'))).written).toBe(false);
      expect((await port.put({ ...key, occurredAt: '2026-12-02T11:00:00Z', v: 'd' }, at('2026-12-02T11:00:00Z'))).written).toBe(false);
      expect((await port.get(key.pk, key.sk))?.v).toBe('b');

      const num = { pk: 'VOTE#n', sk: 'LATEST' };
      const ver = (n: number) => ({ condition: { kind: 'absentOrOlder' as const, field: 'version', value: n } });
      expect((await port.put({ ...num, version: 9 }, ver(9))).written).toBe(true);
      // Numbers compare as numbers (10 > 9), not as strings.
      expect((await port.put({ ...num, version: 10 }, ver(10))).written).toBe(true);
      expect((await port.put({ ...num, version: 10, dup: true }, ver(10))).written).toBe(false);
      expect((await port.put({ ...num, version: 2 }, ver(2))).written).toBe(false);
      expect(await port.get(num.pk, num.sk)).toEqual({ ...num, version: 10 });
    });

    it('does not write absentOrOlder over an item that lacks the field', async () => {
      await port.put({ pk: 'VOTE#m', sk: 'LATEST', other: 1 });
      const result = await port.put({ pk: 'VOTE#m', sk: 'LATEST', occurredAt: 'z' }, {
        condition: { kind: 'absentOrOlder', field: 'occurredAt', value: 'z' },
      });
      expect(result.written).toBe(false);
      expect(await port.get('VOTE#m', 'LATEST')).toEqual({ pk: 'VOTE#m', sk: 'LATEST', other: 1 });
    });

    it('writes with condition unchanged only over the item as it was read (optimistic concurrency)', async () => {
      const unchanged = (value: number | undefined) => ({ condition: { kind: 'unchanged' as const, field: 'revision', value } });
      expect((await port.put({ pk: 'SUITE#s', sk: 'META', revision: 1 }, unchanged(undefined))).written).toBe(false); // no item yet
      await port.put({ pk: 'SUITE#s', sk: 'META', status: 'active' });
      expect((await port.put({ pk: 'SUITE#s', sk: 'META', status: 'saturated', revision: 1 }, unchanged(undefined))).written).toBe(true);
      // Two writers read revision 1; the first wins, the second finds it changed.
      expect((await port.put({ pk: 'SUITE#s', sk: 'META', status: 'retired', revision: 2 }, unchanged(1))).written).toBe(true);
      expect((await port.put({ pk: 'SUITE#s', sk: 'META', status: 'active', revision: 2 }, unchanged(1))).written).toBe(false);
      expect((await port.put({ pk: 'SUITE#s', sk: 'META', status: 'active', revision: 1 }, unchanged(undefined))).written).toBe(false);
      expect(await port.get('SUITE#s', 'META')).toEqual({ pk: 'SUITE#s', sk: 'META', status: 'retired', revision: 2 });
    });

    it('deletes an item, and deleting a missing item is not an error', async () => {
      await port.put({ pk: 'RUN#1', sk: 'META' });
      await port.delete('RUN#1', 'META');
      await port.delete('RUN#1', 'META');
      expect(await port.get('RUN#1', 'META')).toBeUndefined();
    });

    it('putMany writes more than one backend batch, and the last write of a key wins', async () => {
      const items = Array.from({ length: 60 }, (_, i) => ({ pk: 'BULK', sk: `ITEM#${String(i).padStart(3, '0')}`, i }));
      await port.putMany([...items, { pk: 'BULK', sk: 'ITEM#007', i: 700 }]);
      const { items: stored } = await queryAll(port, { partition: 'BULK' });
      expect(stored.map((item) => item.sk)).toEqual(items.map((item) => item.sk));
      expect(stored.find((item) => item.sk === 'ITEM#007')?.i).toBe(700);
      await port.putMany([]);
    });

    for (const { index, partition, sort } of INDEXES) {
      describe(`query on ${index}`, () => {
        const sortKeys = ['A#01', 'A#02', 'A#03', 'B#01', 'B#02', 'a#01', 'C'];
        beforeEach(async () => {
          await port.putMany(
            sortKeys.map((s, i) => {
              const item: RecordItem = { pk: `P#${index}#${i}`, sk: `S#${i}`, n: i };
              item[partition] = 'PART';
              item[sort] = s;
              if (index === 'table') item.pk = 'PART';
              return item;
            }),
          );
          // Same partition on another index, or another partition: never returned.
          await port.put({ pk: 'OTHER', sk: 'A#01', gsi1pk: 'OTHER', gsi1sk: 'A#01', gsi2pk: 'OTHER', gsi2sk: 'A#01' });
          if (index !== 'table') {
            // Sparse: an item with the index partition but no index sort key is not in the index.
            await port.put({ pk: 'SPARSE', sk: 'X', [partition]: 'PART' });
          }
        });
        const sortsOf = (items: RecordItem[]) => items.map((item) => item[sort]);

        it('returns the whole partition in ascending byte order', async () => {
          const page = await port.query({ index, partition: 'PART' });
          expect(sortsOf(page.items)).toEqual(['A#01', 'A#02', 'A#03', 'B#01', 'B#02', 'C', 'a#01']);
          expect(page.cursor).toBeUndefined();
          expect(page.items[0]).toMatchObject({ n: 0 });
        });

        it('filters with beginsWith (case-sensitive), between (inclusive), gte and lte', async () => {
          expect(sortsOf((await port.query({ index, partition: 'PART', sort: { beginsWith: 'A#' } })).items)).toEqual(['A#01', 'A#02', 'A#03']);
          expect(sortsOf((await port.query({ index, partition: 'PART', sort: { beginsWith: 'a' } })).items)).toEqual(['a#01']);
          expect(sortsOf((await port.query({ index, partition: 'PART', sort: { between: ['A#02', 'B#01'] } })).items)).toEqual(['A#02', 'A#03', 'B#01']);
          expect(sortsOf((await port.query({ index, partition: 'PART', sort: { greaterThanOrEqual: 'B#02' } })).items)).toEqual(['B#02', 'C', 'a#01']);
          expect(sortsOf((await port.query({ index, partition: 'PART', sort: { lessThanOrEqual: 'A#02' } })).items)).toEqual(['A#01', 'A#02']);
          expect((await port.query({ index, partition: 'NONE' })).items).toEqual([]);
        });

        it('orders descending and honours limit', async () => {
          const page = await port.query({ index, partition: 'PART', descending: true, limit: 3 });
          expect(sortsOf(page.items)).toEqual(['a#01', 'C', 'B#02']);
          expect(page.cursor).toBeDefined();
          const prefixed = await port.query({ index, partition: 'PART', sort: { beginsWith: 'A#' }, descending: true });
          expect(sortsOf(prefixed.items)).toEqual(['A#03', 'A#02', 'A#01']);
        });

        it('pages with a cursor, every item exactly once, both directions', async () => {
          for (const descending of [false, true]) {
            const { items, pages } = await queryAll(port, { index, partition: 'PART', limit: 2, descending });
            const expected = ['A#01', 'A#02', 'A#03', 'B#01', 'B#02', 'C', 'a#01'];
            expect(sortsOf(items)).toEqual(descending ? expected.reverse() : expected);
            expect(pages).toBe(4);
          }
          const exact = await queryAll(port, { index, partition: 'PART', sort: { beginsWith: 'A#' }, limit: 3 });
          expect(exact.pages).toBe(1);
        });
      });
    }

    it('orders sort keys by UTF-8 bytes, not UTF-16 code units', async () => {
      const keys = ['\u{1F600}', '\uFF5E', '\u00E9', 'a', 'B', 'Z'];
      await port.putMany(keys.map((sk) => ({ pk: 'UNICODE', sk })));
      const page = await port.query({ partition: 'UNICODE' });
      expect(page.items.map((item) => item.sk)).toEqual(['B', 'Z', 'a', '\u00E9', '\uFF5E', '\u{1F600}']);
      const prefixed = await port.query({ partition: 'UNICODE', sort: { beginsWith: '\uFF5E' } });
      expect(prefixed.items.map((item) => item.sk)).toEqual(['\uFF5E']);
    });

    it('pages through index entries that share a sort key', async () => {
      await port.putMany(Array.from({ length: 9 }, (_, i) => ({ pk: `TIE#${i}`, sk: 'META', gsi1pk: 'DAY', gsi1sk: i < 6 ? 'SAME' : `T${i}` })));
      const { items } = await queryAll(port, { index: 'gsi1', partition: 'DAY', limit: 2 });
      expect(items.map((item) => item.pk).sort()).toEqual(Array.from({ length: 9 }, (_, i) => `TIE#${i}`));
      expect(new Set(items.map((item) => item.pk)).size).toBe(9);
    });

    it('caps a page at 1000 items', async () => {
      await port.putMany(Array.from({ length: 1005 }, (_, i) => ({ pk: 'BIG', sk: String(i).padStart(5, '0') })));
      const page = await port.query({ partition: 'BIG', limit: 5000 });
      expect(page.items).toHaveLength(1000);
      expect(page.cursor).toBeDefined();
      const rest = await port.query({ partition: 'BIG', limit: 5000, cursor: page.cursor! });
      expect(rest.items.map((item) => item.sk)).toEqual(['01000', '01001', '01002', '01003', '01004']);
      expect(rest.cursor).toBeUndefined();
    });
  });
}
