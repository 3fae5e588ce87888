/**
 * Builds a cache entry once, whoever asks: concurrent resolves in this process share one promise, and other
 * processes (other attempts, other harnesses on the same cache folder) meet a lock file created with O_EXCL beside the
 * entry. The build writes into a temporary folder that is renamed into place when complete, so a reader sees a whole
 * entry or none, and a crash midway leaves only a temporary folder (removed by the next build of that key) and a lock
 * whose owner is dead (taken over).
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { mkdir, open, readFile, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isProcessAlive } from '../../shared/process-liveness.ts';
import { EnvironmentBuildError } from './environment-errors.ts';

/** The file whose presence marks a complete entry (written last, inside the temporary folder). */
export const ENTRY_MARKER = 'env.json';

const inFlight = new Map<string, Promise<{ dir: string; built: boolean }>>();

const exists = (path: string) => stat(path).then(() => true, () => false);

export interface EnsureEntryOptions {
  /** How long to wait for another process's build before giving up. */
  waitMs: number;
  /** Between looks at another process's lock. */
  pollMs?: number;
}

/**
 * The folder of cache entry `key` under `cacheDir`, building it with `build(tmpDir)` when absent. `built` tells
 * whether this call built it.
 *
 * @example
 * const { dir } = await ensureEntry(cacheDir, 'python-1a2b…', async (tmp) => { …; await writeFile(join(tmp, 'env.json'), …) }, { waitMs: 600_000 });
 */
export function ensureEntry(cacheDir: string, key: string, build: (tmpDir: string) => Promise<void>, options: EnsureEntryOptions): Promise<{ dir: string; built: boolean }> {
  const dir = join(cacheDir, key);
  const running = inFlight.get(dir);
  if (running) return running.then((r) => ({ ...r, built: false }));
  const promise = ensureEntryOnce(cacheDir, key, build, options).finally(() => inFlight.delete(dir));
  inFlight.set(dir, promise);
  return promise;
}

async function ensureEntryOnce(cacheDir: string, key: string, build: (tmpDir: string) => Promise<void>, options: EnsureEntryOptions): Promise<{ dir: string; built: boolean }> {
  const dir = join(cacheDir, key);
  if (await exists(join(dir, ENTRY_MARKER))) return { dir, built: false };
  await mkdir(cacheDir, { recursive: true });
  const lockPath = join(cacheDir, `${key}.lock`);
  const deadline = Date.now() + options.waitMs;
  const pollMs = options.pollMs ?? 200;
  for (;;) {
    let handle;
    try {
      handle = await open(lockPath, 'wx');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (handle) {
      try {
        await handle.writeFile(`${JSON.stringify({ pid: process.pid, host: hostname(), at: new Date().toISOString() })}\n`);
        await handle.close();
        // Someone may have published between our first look and the lock.
        if (await exists(join(dir, ENTRY_MARKER))) return { dir, built: false };
        await removeLeftovers(cacheDir, key);
        const tmp = join(cacheDir, `.tmp-${key}-${randomUUID()}`);
        await mkdir(tmp, { recursive: true });
        try {
          await build(tmp);
          if (!(await exists(join(tmp, ENTRY_MARKER)))) throw new EnvironmentBuildError(`environment ${key}: the build finished without writing ${ENTRY_MARKER}`);
          // A stale entry without its marker (a crash of an older recipe) is moved out of the way first.
          if (await exists(dir)) await rename(dir, join(cacheDir, `.tmp-${key}-stale-${randomUUID()}`));
          await rename(tmp, dir);
        } finally {
          await rm(tmp, { recursive: true, force: true });
        }
        return { dir, built: true };
      } finally {
        await rm(lockPath, { force: true });
      }
    }
    // Another builder holds the lock: wait for its entry, or take over when it died.
    if (await exists(join(dir, ENTRY_MARKER))) return { dir, built: false };
    const owner = await readFile(lockPath, 'utf8').then((t) => JSON.parse(t) as { pid?: number; host?: string }, () => undefined);
    if (owner && owner.host === hostname() && !isProcessAlive(owner.pid ?? 0)) {
      await rm(lockPath, { force: true });
      continue;
    }
    if (Date.now() > deadline) throw new EnvironmentBuildError(`environment ${key}: another build (lock ${lockPath}, ${owner ? `pid ${owner.pid} on ${owner.host}` : 'owner unknown'}) did not finish in ${Math.round(options.waitMs / 1000)} s`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** Temporary folders of earlier builds of `key` that died midway (we hold the lock, so none is live). */
async function removeLeftovers(cacheDir: string, key: string): Promise<void> {
  for (const name of await readdir(cacheDir).catch(() => [] as string[])) {
    if (name.startsWith(`.tmp-${key}-`)) await rm(join(cacheDir, name), { recursive: true, force: true });
  }
}
