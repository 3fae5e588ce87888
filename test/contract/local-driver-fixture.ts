/**
 * Temporary data folders for the local drivers' tests: each call opens fresh databases in a new folder;
 * everything opened is closed and removed after the file's tests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { afterAll } from 'vitest';
import { openDatabase } from '../../lib/drivers/local/sqlite-database.ts';

export function localFixture(): { dir(): string; database(name: string): DatabaseSync } {
  const dirs: string[] = [];
  const databases: DatabaseSync[] = [];
  afterAll(() => {
    for (const db of databases) if (db.isOpen) db.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const dir = (): string => {
    const made = mkdtempSync(join(tmpdir(), 'flywheel-contract-'));
    dirs.push(made);
    return made;
  };
  return {
    dir,
    database: (name) => {
      const db = openDatabase(join(dir(), name));
      databases.push(db);
      return db;
    },
  };
}
