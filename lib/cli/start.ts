import type { Command } from 'commander';
import { resolve } from 'node:path';
import { DEFAULT_DATA_DIR, runtimeOptionsFromEnv, startLocalRuntime } from '../local/runtime.ts';
import { HumanLogger } from './human-logger.ts';
import { dataDirFrom } from './target.ts';

/** A word for a POSIX shell: as it is when it is safe, else in single quotes. */
function shellWord(text: string): string {
  return /^[A-Za-z0-9_./:@%+=-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

/**
 * What `flywheel start` prints once the runtime listens: where it is, its key, and commands to copy; each command
 * names `--data-dir` when the runtime runs on another folder than the default, so it reaches this runtime.
 *
 * @example
 * process.stdout.write(startBanner({ url: 'http://127.0.0.1:4010', dataDir: '/tmp/fw', apiKey: 'fwlocal_x' }));
 */
export function startBanner(runtime: { url: string; dataDir: string; apiKey: string }): string {
  const dd = resolve(runtime.dataDir) === resolve(DEFAULT_DATA_DIR) ? '' : ` --data-dir ${shellWord(runtime.dataDir)}`;
  return [
    '',
    `Flywheel local runtime listening on ${runtime.url}`,
    `  data dir: ${runtime.dataDir}`,
    `  API key:  ${runtime.apiKey}`,
    `  console:  ${runtime.url}/`,
    '',
    'Try it:',
    `  npm run flywheel -- feedback send --rating up --comment 'looks right' --model ckpt-1${dd}`,
    `  npm run flywheel -- feedback list${dd}`,
    `  npm run flywheel -- suite register -f examples/quickstart/suite.json${dd}`,
    `  npm run flywheel -- results${dd}`,
    `  curl -H 'x-api-key: ${runtime.apiKey}' ${runtime.url}/v1/feedback`,
    '',
    'Ctrl-C stops it (the queue consumer drains first).',
    '',
  ].join('\n');
}

/** `flywheel start`: the local system in one process. */
export function registerStartCommand(program: Command): void {
  program
    .command('start')
    .description('run the local system: the API on localhost, the ingest queue consumer, state in the data folder')
    .option('--port <port>', 'port to listen on (0 = a free one)', process.env.FLYWHEEL_PORT ?? '4010')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--data-dir <dir>', 'state folder (env FLYWHEEL_DATA_DIR; default .flywheel/ in the checkout)')
    .option('--max-receive-count <n>', 'receives before a message goes to the dead-letter queue')
    .option('--visibility-timeout <seconds>', 'seconds before a failed message is retried')
    .option('--log-format <format>', 'text (lines for a person; the default on a terminal) or json (the default otherwise)')
    .action(async (flags: { port: string; host: string; dataDir?: string; maxReceiveCount?: string; visibilityTimeout?: string; logFormat?: string }) => {
      if (flags.logFormat !== undefined && flags.logFormat !== 'text' && flags.logFormat !== 'json') throw new Error(`--log-format is text or json, not ${flags.logFormat}`);
      const env = runtimeOptionsFromEnv();
      const text = (flags.logFormat ?? (process.stdout.isTTY ? 'text' : 'json')) === 'text';
      const runtime = await startLocalRuntime({
        ...env,
        ...(text ? { logger: new HumanLogger({ serviceName: 'flywheel-local', logLevel: (process.env.FLYWHEEL_LOG_LEVEL ?? 'INFO') as 'INFO' }) } : {}),
        dataDir: dataDirFrom(flags),
        port: Number(flags.port),
        host: flags.host,
        ...(flags.maxReceiveCount ? { maxReceiveCount: Number(flags.maxReceiveCount) } : {}),
        ...(flags.visibilityTimeout ? { visibilityTimeoutSeconds: Number(flags.visibilityTimeout) } : {}),
      });
      process.stdout.write(startBanner(runtime));
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) return;
        stopping = true;
        process.stderr.write(`${signal}: stopping…\n`);
        runtime.close().then(
          () => process.exit(0),
          (error: unknown) => {
            process.stderr.write(`stop failed: ${String(error)}\n`);
            process.exit(1);
          },
        );
      };
      process.on('SIGINT', () => stop('SIGINT'));
      process.on('SIGTERM', () => stop('SIGTERM'));
    });
}
