/**
 * Temporary folders for one test file: `tempDirs(prefix)` at the top of the file returns a function that makes a
 * fresh folder under the OS temp dir on each call; all of them are removed after the file's tests (after the file's
 * own later-registered `afterAll` hooks, which run first, so processes using a folder are stopped before it goes).
 *
 * @example
 * const tempDir = tempDirs('flywheel-e2e-');
 * it('keeps data across a restart', async () => {
 *   const dataDir = tempDir();
 * });
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

export function tempDirs(prefix: string): () => string {
  const made: string[] = [];
  afterAll(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    made.push(dir);
    return dir;
  };
}
