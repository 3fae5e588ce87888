/**
 * Temporary data folders for the local drivers' tests: each call opens fresh databases in a new folder;
 * everything opened is closed and removed after the file's tests.
 */
import { join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { afterAll } from 'vitest';
import { openDatabase } from '../../lib/drivers/local/sqlite-database.ts';
import { tempDirs } from '../support/temp-dirs.ts';

export function localFixture(): { dir(): string; database(name: string): DatabaseSync } {
  // Registered before the hook that closes the databases, so the folders go after the databases are closed.
  const dir = tempDirs('flywheel-contract-');
  const databases: DatabaseSync[] = [];
  afterAll(() => {
    for (const db of databases) if (db.isOpen) db.close();
  });
  return {
    dir,
    database: (name) => {
      const db = openDatabase(join(dir(), name));
      databases.push(db);
      return db;
    },
  };
}
