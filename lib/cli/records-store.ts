/**
 * The records a CLI command reads and writes directly, without the API: the local data folder's, or with `--table`
 * the stage's DynamoDB records table (API keys must be made before any API can be called; reward specifications are
 * an operator's settings).
 *
 * @example
 * recordsStoreOptions(program.command('keys list')).action(async (flags) => {
 *   const store = openRecordsStore(flags);
 *   try { … store.records … } finally { store.close(); }
 * });
 */
import type { Command } from 'commander';
import { openDynamoDbRecords } from '../drivers/aws/open-aws-drivers.ts';
import { openLocalPorts } from '../drivers/local/local-ports.ts';
import { ensureDataDir } from '../local/runtime.ts';
import type { RecordsPort } from '../ports/records.ts';
import { dataDirFrom } from './target.ts';

export interface RecordsStoreFlags {
  dataDir?: string;
  table?: string;
  region?: string;
  endpointUrl?: string;
}

/** The DynamoDB table with `--table` (`aws: true`), else the local data folder's records. */
export function openRecordsStore(flags: RecordsStoreFlags): { records: RecordsPort; aws: boolean; close: () => void } {
  if (flags.table) return { ...openDynamoDbRecords(flags, flags.table), aws: true };
  const dir = dataDirFrom(flags);
  ensureDataDir(dir);
  const ports = openLocalPorts(dir);
  return { records: ports.records, aws: false, close: () => ports.close() };
}

export function recordsStoreOptions(command: Command): Command {
  return command
    .option('--data-dir <dir>', 'local data folder (env FLYWHEEL_DATA_DIR; default .flywheel/)')
    .option('--table <name>', "AWS: the records table (the Data stack's RecordsTable) instead of the local folder")
    .option('--region <region>', 'AWS region (default from the environment)')
    .option('--endpoint-url <url>', 'AWS: a custom DynamoDB endpoint (e.g. moto)');
}
