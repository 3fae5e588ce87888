/**
 * What the blobs port promises, on every driver: bytes put under a key come back byte for byte (text as UTF-8);
 * a missing key reads as undefined; a put replaces; delete removes and deleting a missing key is not an error;
 * `list` returns the keys that start with a prefix (a plain string prefix, not only folders) in lexicographic
 * order, paged with a cursor so that every key is listed exactly once.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { BlobsPort } from '../../lib/ports/blobs.ts';

async function listAll(port: BlobsPort, prefix: string, limit: number): Promise<{ keys: string[]; pages: number }> {
  const keys: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await port.list(prefix, { limit, ...(cursor ? { cursor } : {}) });
    keys.push(...page.keys);
    cursor = page.cursor;
    pages++;
  } while (cursor !== undefined && pages < 1000);
  return { keys, pages };
}

export function describeBlobsContract(name: string, makePort: () => Promise<BlobsPort>): void {
  describe(`blobs contract: ${name}`, () => {
    let port: BlobsPort;
    beforeEach(async () => {
      port = await makePort();
    });

    it('returns undefined for a missing key', async () => {
      expect(await port.get('missing/key.json')).toBeUndefined();
    });

    it('round-trips text as UTF-8 and replaces on put', async () => {
      await port.put('notes/a.txt', 'héllo 😀', { contentType: 'text/plain' });
      expect(new TextDecoder().decode(await port.get('notes/a.txt'))).toBe('héllo 😀');
      await port.put('notes/a.txt', 'second');
      expect(new TextDecoder().decode(await port.get('notes/a.txt'))).toBe('second');
    });

    it('round-trips every byte value', async () => {
      const bytes = new Uint8Array(512).map((_, i) => (i * 7) % 256);
      await port.put('bin/all-bytes', bytes, { contentType: 'application/octet-stream' });
      const back = await port.get('bin/all-bytes');
      expect(back).toBeInstanceOf(Uint8Array);
      expect(Array.from(back!)).toEqual(Array.from(bytes));
      await port.put('bin/empty', new Uint8Array());
      expect((await port.get('bin/empty'))?.byteLength).toBe(0);
    });

    it('deletes, and deleting a missing key is not an error', async () => {
      await port.put('tmp/x', 'x');
      await port.delete('tmp/x');
      await port.delete('tmp/x');
      expect(await port.get('tmp/x')).toBeUndefined();
      expect((await port.list('tmp/')).keys).toEqual([]);
    });

    it('lists by string prefix in lexicographic order', async () => {
      const keys = ['raw/dt=2026-12-02/b.jsonl', 'raw/dt=2026-12-01/a.jsonl', 'raw/dt=2026-12-02/a.jsonl', 'raw/dtx', 'other/a', 'raw/dt=2026-12-02/sub/c'];
      for (const key of keys) await port.put(key, key);
      expect((await port.list('raw/dt=2026-12-02/')).keys).toEqual(['raw/dt=2026-12-02/a.jsonl', 'raw/dt=2026-12-02/b.jsonl', 'raw/dt=2026-12-02/sub/c']);
      expect((await port.list('raw/dt')).keys).toEqual([
        'raw/dt=2026-12-01/a.jsonl',
        'raw/dt=2026-12-02/a.jsonl',
        'raw/dt=2026-12-02/b.jsonl',
        'raw/dt=2026-12-02/sub/c',
        'raw/dtx',
      ]);
      expect((await port.list('')).keys).toHaveLength(keys.length);
      const page = await port.list('nothing/');
      expect(page).toEqual({ keys: [] });
    });

    it('pages with a cursor, every key exactly once', async () => {
      const keys = Array.from({ length: 7 }, (_, i) => `page/k${i}`);
      for (const key of [...keys].reverse()) await port.put(key, key);
      const first = await port.list('page/', { limit: 3 });
      expect(first.keys).toEqual(keys.slice(0, 3));
      expect(first.cursor).toBeDefined();
      const all = await listAll(port, 'page/', 3);
      expect(all.keys).toEqual(keys);
      expect(all.pages).toBe(3);
    });
  });
}
