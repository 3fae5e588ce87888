import type { Command } from 'commander';
import { runtimeOptionsFromEnv, startLocalRuntime } from '../local/runtime.ts';
import { dataDirFrom } from './target.ts';

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
    .action(async (flags: { port: string; host: string; dataDir?: string; maxReceiveCount?: string; visibilityTimeout?: string }) => {
      const env = runtimeOptionsFromEnv();
      const runtime = await startLocalRuntime({
        ...env,
        dataDir: dataDirFrom(flags),
        port: Number(flags.port),
        host: flags.host,
        ...(flags.maxReceiveCount ? { maxReceiveCount: Number(flags.maxReceiveCount) } : {}),
        ...(flags.visibilityTimeout ? { visibilityTimeoutSeconds: Number(flags.visibilityTimeout) } : {}),
      });
      const sample = JSON.stringify({
        eventId: 'hello-1',
        kind: 'rating',
        rating: 'up',
        traceId: 't1',
        sessionId: 's1',
        turnId: '1',
        model: 'ckpt-1',
        source: 'user',
        reporter: 'me',
        trainingConsent: false,
        occurredAt: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      });
      process.stdout.write(
        [
          '',
          `Flywheel local runtime listening on ${runtime.url}`,
          `  data dir: ${runtime.dataDir}`,
          `  API key:  ${runtime.apiKey}`,
          '',
          'Try it:',
          `  curl -H 'x-api-key: ${runtime.apiKey}' -H 'content-type: application/json' -d '${sample}' ${runtime.url}/v1/feedback`,
          `  curl -H 'x-api-key: ${runtime.apiKey}' ${runtime.url}/v1/feedback/hello-1`,
          '  npm run flywheel -- feedback list',
          '',
          'Ctrl-C stops it (the queue consumer drains first).',
          '',
        ].join('\n'),
      );
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
