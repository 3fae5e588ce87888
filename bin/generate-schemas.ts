/**
 * `npm run schemas`: writes the JSON Schemas generated from the TypeScript (zod) schemas that other languages read,
 * today the trajectory line (`docs/schemas/trajectory.schema.json`, validated by the trainer's Python tests).
 * `--check` writes nothing and exits 1 when a committed file differs from what the schemas produce now.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TRAJECTORY_JSON_SCHEMA_PATH, trajectoryJsonSchemaText } from '../lib/harness/trajectory/trajectory-json-schema.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');
const files: Array<[string, string]> = [[TRAJECTORY_JSON_SCHEMA_PATH, trajectoryJsonSchemaText()]];
let stale = 0;
for (const [path, text] of files) {
  const target = join(root, path);
  if (check) {
    let current = '';
    try {
      current = readFileSync(target, 'utf8');
    } catch {
      // missing: stale
    }
    if (current !== text) {
      stale++;
      process.stderr.write(`${path} is out of date: run npm run schemas\n`);
    }
  } else {
    writeFileSync(target, text);
    process.stdout.write(`wrote ${path}\n`);
  }
}
if (stale > 0) process.exitCode = 1;
