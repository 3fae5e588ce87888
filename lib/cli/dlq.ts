import type { Command } from 'commander';
import { openSqsQueues } from '../drivers/aws/open-aws-drivers.ts';
import { openLocalPorts } from '../drivers/local/local-ports.ts';
import { listDeadLetters } from '../pipeline/list-dead-letters.ts';
import { redriveDeadLetters } from '../pipeline/redrive-dead-letters.ts';
import type { QueuePort } from '../ports/queue.ts';
import { table } from './table.ts';
import { dataDirFrom } from './target.ts';

interface QueueFlags {
  dataDir?: string;
  queueUrl?: string;
  dlqUrl?: string;
  region?: string;
  endpointUrl?: string;
}

/** The ingest queue and its DLQ: SQS when `--dlq-url` is given, else the local data folder's queues. */
async function openQueues(flags: QueueFlags, needSource: boolean) {
  if (flags.dlqUrl || flags.queueUrl) {
    if (!flags.dlqUrl) throw new Error('--queue-url needs --dlq-url too');
    if (needSource && !flags.queueUrl) throw new Error('redrive on AWS needs --queue-url (the source queue) and --dlq-url');
    return openSqsQueues(flags, { dlqUrl: flags.dlqUrl, ...(flags.queueUrl ? { queueUrl: flags.queueUrl } : {}) });
  }
  const ports = await openLocalPorts(dataDirFrom(flags));
  return { dlq: ports.ingestDeadLetters, source: ports.ingestQueue as QueuePort | undefined, close: () => ports.close() };
}

function queueOptions(command: Command): Command {
  return command
    .option('--data-dir <dir>', 'local data folder (env FLYWHEEL_DATA_DIR; default .flywheel/)')
    .option('--queue-url <url>', 'AWS: the source (ingest) queue URL')
    .option('--dlq-url <url>', 'AWS: the dead-letter queue URL')
    .option('--region <region>', 'AWS region (default from the environment)')
    .option('--endpoint-url <url>', 'AWS: a custom SQS endpoint (e.g. moto)');
}

/** `flywheel dlq list|redrive`: inspect the ingest dead-letter queue and move its messages back. */
export function registerDlqCommands(program: Command): void {
  const dlq = program.command('dlq').description('the ingest dead-letter queue: list and redrive');

  queueOptions(dlq.command('list').description('show dead letters without removing them'))
    .option('--max <n>', 'show at most n', '100')
    .option('--json', 'print JSON')
    .action(async (flags: QueueFlags & { max: string; json?: boolean }) => {
      const queues = await openQueues(flags, false);
      try {
        const messages = await listDeadLetters(queues.dlq, { max: Number(flags.max) });
        if (flags.json) {
          process.stdout.write(`${JSON.stringify(messages, null, 2)}\n`);
          return;
        }
        const rows = messages.map((m) => [m.messageId, new Date(m.sentAt).toISOString(), m.body.replace(/\s+/g, ' ')]);
        process.stdout.write(table(['messageId', 'sentAt', 'body'], rows));
        process.stdout.write(`${messages.length} dead letter(s)\n`);
      } finally {
        await queues.close();
      }
    });

  queueOptions(
    dlq
      .command('redrive')
      .description('move dead letters back to the ingest queue; each is deleted from the DLQ only after its send succeeded'),
  )
    .option('--max <n>', 'move at most n (default: all)')
    .option('--json', 'print JSON')
    .action(async (flags: QueueFlags & { max?: string; json?: boolean }) => {
      const queues = await openQueues(flags, true);
      try {
        const result = await redriveDeadLetters(queues.dlq, queues.source!, {
          ...(flags.max ? { max: Number(flags.max) } : {}),
        });
        if (flags.json) process.stdout.write(`${JSON.stringify(result)}\n`);
        else {
          process.stdout.write(`moved ${result.moved} dead letter(s) back to the ingest queue; ${result.failed.length} failed\n`);
          for (const f of result.failed) process.stderr.write(`  ${f.messageId}: ${f.error}\n`);
        }
        if (result.failed.length > 0) process.exitCode = 1;
      } finally {
        await queues.close();
      }
    });
}
