/**
 * Counts the rows a raw archive folder holds (lines of its `.jsonl` files), reading each file once: the archive's
 * objects are written whole (temporary file, then rename) and a retry rewrites the same rows, so a file seen once
 * keeps its count. Derived objects (`derived-…`: thumbs from feedback) are left out, so a metrics count is of the
 * metric events posted.
 *
 * @example
 * const exposures = new ArchiveLines(join(dataDir, 'blobs/raw/exposures'));
 * await exposures.count(); // rows so far
 */
import { readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';

export class ArchiveLines {
  readonly #folder: string;
  readonly #seen = new Map<string, number>();
  #total = 0;

  constructor(folder: string) {
    this.#folder = folder;
  }

  /** Rows in the folder's `.jsonl` files now (derived objects excluded). */
  async count(): Promise<number> {
    let files: string[];
    try {
      files = await readdir(this.#folder, { recursive: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw error;
    }
    for (const file of files) {
      if (!file.endsWith('.jsonl') || basename(file).startsWith('derived-') || this.#seen.has(file)) continue;
      const text = await readFile(join(this.#folder, file), 'utf8').catch((error: NodeJS.ErrnoException) => {
        // Renamed away between the listing and the read (a retry's rewrite): counted on the next look.
        if (error.code === 'ENOENT') return undefined;
        throw error;
      });
      if (text === undefined) continue;
      let lines = 0;
      for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines++;
      this.#seen.set(file, lines);
      this.#total += lines;
    }
    return this.#total;
  }
}
