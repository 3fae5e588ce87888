/**
 * Blobs port on the filesystem: key `a/b/c.json` is the file `<root>/a/b/c.json`, so archives can be browsed
 * and read by other tools. Keys are checked before they touch the filesystem: no absolute keys, no `.`/`..`/empty
 * segments, no backslashes or NUL. A write goes to a temporary file, is fsynced, and is renamed into place, so a
 * reader sees the old object or the new one, never half of one. Listing is in UTF-8 byte order, like S3.
 *
 * Unlike S3, a key cannot also be a "folder" of other keys (`a` and `a/b` cannot both exist): such a put throws.
 *
 * @example
 * const blobs = new FsBlobs('.flywheel/blobs');
 * await blobs.put('raw/feedback/dt=2026-12-02/batch-1.jsonl', lines);
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rmdir, unlink } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { BlobListPage, BlobPutOptions, BlobsPort } from '../../ports/blobs.ts';
import { ValidationError } from '../../errors.ts';
import { decodeCursor, encodeCursor, pageSize } from '../cursor.ts';
import { compareUtf8 } from './utf8-order.ts';

/** Temporary files live here, outside every key's path. */
const TEMP_DIR = '.flywheel-tmp';

export class FsBlobs implements BlobsPort {
  readonly #root: string;
  readonly #fsync: boolean;

  /** @param options.fsync false skips the fsync before rename (faster, not durable against power loss). */
  constructor(root: string, options: { fsync?: boolean } = {}) {
    this.#root = resolve(root);
    this.#fsync = options.fsync ?? true;
    mkdirSync(join(this.#root, TEMP_DIR), { recursive: true });
  }

  #path(key: string): string {
    const segments = key.split('/');
    const bad =
      key === '' ||
      key.startsWith('/') ||
      key.includes('\\') ||
      key.includes('\0') ||
      segments.some((s) => s === '' || s === '.' || s === '..') ||
      segments[0] === TEMP_DIR;
    if (bad) throw new ValidationError(`Invalid blob key: ${JSON.stringify(key)}`, [{ path: 'key', message: 'not a safe relative key' }]);
    return join(this.#root, ...segments);
  }

  async put(key: string, body: Uint8Array | string, _options: BlobPutOptions = {}): Promise<void> {
    const path = this.#path(key);
    await mkdir(dirname(path), { recursive: true });
    const temp = join(this.#root, TEMP_DIR, randomUUID());
    const handle = await open(temp, 'w');
    try {
      await handle.writeFile(body);
      if (this.#fsync) await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await rename(temp, path);
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      throw error;
    }
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    try {
      const buffer = await readFile(this.#path(key));
      return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') return undefined;
      throw error;
    }
  }

  /** Walks only the folder the prefix names; the cursor is the last key returned. */
  async list(prefix: string, options: { cursor?: string; limit?: number } = {}): Promise<BlobListPage> {
    const limit = pageSize(options.limit);
    const after = options.cursor ? decodeCursor<string>(options.cursor) : undefined;
    const folder = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
    if (folder !== '') this.#path(folder);
    const keys: string[] = [];
    await this.#walk(folder, keys);
    const matching = keys
      .filter((key) => key.startsWith(prefix) && (after === undefined || compareUtf8(key, after) > 0))
      .sort(compareUtf8);
    const page = matching.slice(0, limit);
    return matching.length > limit ? { keys: page, cursor: encodeCursor(page[page.length - 1]) } : { keys: page };
  }

  async #walk(folder: string, into: string[]): Promise<void> {
    let entries;
    try {
      entries = await readdir(folder === '' ? this.#root : join(this.#root, ...folder.split('/')), { withFileTypes: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return;
      throw error;
    }
    for (const entry of entries) {
      if (folder === '' && entry.name === TEMP_DIR) continue;
      const key = folder === '' ? entry.name : `${folder}/${entry.name}`;
      if (entry.isDirectory()) await this.#walk(key, into);
      else if (entry.isFile()) into.push(key);
    }
  }

  /** Deleting a missing key is not an error (as in S3); folders left empty are removed. */
  async delete(key: string): Promise<void> {
    const path = this.#path(key);
    try {
      await unlink(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return;
      throw error;
    }
    let folder = dirname(path);
    while (folder.length > this.#root.length && folder.startsWith(this.#root + sep)) {
      try {
        await rmdir(folder);
      } catch {
        break;
      }
      folder = dirname(folder);
    }
  }
}
