import type { Command } from 'commander';
import { createApiKey, listApiKeys, revokeApiKey } from '../auth/api-keys.ts';
import { openRecordsStore, recordsStoreOptions, type RecordsStoreFlags } from './records-store.ts';
import { table as textTable } from './table.ts';

/**
 * `flywheel keys create|list|revoke`: API keys with a tenant and scopes (`ingest`, `read`, `admin`), in the local data
 * folder or, with `--table`, in the stage's records table. A key is shown once, when created; only its hash is kept.
 */
export function registerKeysCommands(program: Command): void {
  const keys = program.command('keys').description('API keys: a tenant and scopes (ingest: post feedback and reports; read; admin: suites, checkpoints, sweeps, approvals)');

  recordsStoreOptions(
    keys
      .command('create')
      .description('create a key and print it (once): --tenant t --scopes ingest,read [--name n]')
      .requiredOption('--tenant <tenant>', 'the tenant whose data the key reaches (lowercase letters, digits, -)')
      .requiredOption('--scopes <list>', 'comma-separated: ingest, read, admin (admin implies read)')
      .option('--name <name>', 'who or what holds it')
      .option('--json', 'print JSON'),
  ).action(async (flags: RecordsStoreFlags & { tenant: string; scopes: string; name?: string; json?: boolean }) => {
    const store = openRecordsStore(flags);
    try {
      const { key, record } = await createApiKey(store.records, { tenant: flags.tenant, scopes: flags.scopes, ...(flags.name ? { name: flags.name } : {}) }, new Date());
      if (flags.json) {
        process.stdout.write(`${JSON.stringify({ key, ...record }, null, 2)}\n`);
      } else {
        process.stdout.write(`${key}\n`);
        process.stderr.write(`key ${record.keyId}: tenant ${record.tenant}, scopes ${record.scopes.join(',')}; it is not shown again\n`);
      }
      if (store.aws) {
        process.stderr.write(
          'On AWS the key must also be an API Gateway key of the usage plan (it throttles per key):\n' +
            `  aws apigateway create-api-key --name ${record.keyId} --enabled --value '<the key>'\n` +
            '  aws apigateway create-usage-plan-key --usage-plan-id <UsagePlanId output> --key-type API_KEY --key-id <id from above>\n',
        );
      }
    } finally {
      store.close();
    }
  });

  recordsStoreOptions(keys.command('list').description('every key: id, tenant, scopes, name, created, revoked').option('--json', 'print JSON')).action(
    async (flags: RecordsStoreFlags & { json?: boolean }) => {
      const store = openRecordsStore(flags);
      try {
        const all = await listApiKeys(store.records);
        if (flags.json) {
          process.stdout.write(`${JSON.stringify(all, null, 2)}\n`);
          return;
        }
        const rows = all.map((k) => [k.keyId, k.tenant, k.scopes.join(','), k.name ?? '', k.createdAt, k.revokedAt ?? '']);
        process.stdout.write(textTable(['keyId', 'tenant', 'scopes', 'name', 'created', 'revoked'], rows));
      } finally {
        store.close();
      }
    },
  );

  recordsStoreOptions(keys.command('revoke').description('revoke a key by its id (from keys list); on AWS cached answers last up to 5 minutes').argument('<keyId>', 'the key id')).action(
    async (keyId: string, flags: RecordsStoreFlags) => {
      const store = openRecordsStore(flags);
      try {
        const record = await revokeApiKey(store.records, keyId, new Date());
        process.stdout.write(`revoked ${record.keyId} (tenant ${record.tenant}) at ${record.revokedAt}\n`);
      } finally {
        store.close();
      }
    },
  );
}
