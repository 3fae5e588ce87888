/**
 * The console's build for a runtime start, without bundling again when nothing changed: the last build is kept in a
 * cache folder (under the OS temp folder, per user) keyed by the size and modification time of every source file it
 * was made from; a start whose sources match copies the three files instead of running esbuild (a test suite starts
 * many runtimes). Any change to a source file, or to what it imports, makes a new build.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { buildConsole, type BuildConsoleResult } from './build-console.ts';

interface CacheIndex {
  inputs: string[];
  key: string;
}

/** The default cache folder: one per user, so two users of a machine never share files. */
export function defaultConsoleCacheDir(): string {
  return join(tmpdir(), `flywheel-console-cache-${userInfo().uid}`);
}

/** A key over the inputs' paths, sizes and modification times; undefined when one of them is gone. */
function keyOf(inputs: readonly string[]): string | undefined {
  const hash = createHash('sha256');
  for (const path of inputs) {
    try {
      const s = statSync(path);
      hash.update(`${path}\0${s.size}\0${s.mtimeMs}\n`);
    } catch {
      return undefined;
    }
  }
  return hash.digest('hex').slice(0, 24);
}

function copyFiles(from: string, to: string): string[] {
  rmSync(to, { recursive: true, force: true });
  mkdirSync(to, { recursive: true });
  const files = readdirSync(from).sort();
  for (const f of files) copyFileSync(join(from, f), join(to, f));
  return files;
}

/**
 * Puts the console's build into `outDir`: copied from the cache when the sources are unchanged, built otherwise
 * (and cached). Concurrent starts are safe: a cache entry appears by an atomic rename, or not at all.
 *
 * @example
 * const { files, cached } = await ensureConsoleBuilt({ outDir: join(dataDir, 'console') });
 */
export async function ensureConsoleBuilt(options: { outDir: string; cacheDir?: string }): Promise<{ files: string[]; cached: boolean }> {
  const cacheDir = options.cacheDir ?? defaultConsoleCacheDir();
  const indexFile = join(cacheDir, 'index.json');
  try {
    const index = JSON.parse(readFileSync(indexFile, 'utf8')) as CacheIndex;
    const entry = join(cacheDir, index.key);
    if (keyOf(index.inputs) === index.key && existsSync(join(entry, 'index.html'))) return { files: copyFiles(entry, options.outDir), cached: true };
  } catch {
    // no cache yet, or unreadable: build below
  }
  const built: BuildConsoleResult = await buildConsole({ outDir: options.outDir });
  const key = keyOf(built.inputs);
  if (key) {
    try {
      mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
      const entry = join(cacheDir, key);
      if (!existsSync(entry)) {
        const staging = `${entry}.${process.pid}.${Date.now()}`;
        copyFiles(options.outDir, staging);
        try {
          renameSync(staging, entry);
        } catch {
          rmSync(staging, { recursive: true, force: true }); // another start cached the same build first
        }
      }
      const tmpIndex = `${indexFile}.${process.pid}`;
      writeFileSync(tmpIndex, JSON.stringify({ inputs: built.inputs, key } satisfies CacheIndex));
      renameSync(tmpIndex, indexFile);
    } catch {
      // a cache that cannot be written only costs the next start a build
    }
  }
  return { files: built.files, cached: false };
}
