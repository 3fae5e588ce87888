/**
 * The ingest queue consumer on its own thread: the processor's SQLite writes and JSON work then run on the second
 * core instead of stalling the HTTP server's event loop. It opens its own local ports on the same data folder
 * (SQLite in WAL mode lets both threads work at once). Started by `lib/local/runtime.ts`; stops on a 'stop' message
 * after draining the batches in flight.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Logger } from '@aws-lambda-powertools/logger';
import type { SQSEvent } from 'aws-lambda';
import { openLocalPorts } from '../drivers/local/local-ports.ts';
import { makeProcessFeedbackHandler } from '../feedback/consumers/process-feedback.ts';
import { startLocalModesPipeline } from '../modes/local/local-modes-pipeline.ts';
import type { Ports } from '../ports/ports.ts';
import { createQueueConsumer, type QueueConsumer, type SqsBatchHandler } from '../drivers/local/queue-consumer.ts';

export interface ConsumerSettings {
  dataDir: string;
  maxReceiveCount: number;
  visibilityTimeoutSeconds: number;
  failMessagesMatching?: string;
  logLevel: string;
}

/** The processor handler over `ports`, with the optional fault drill of `failMessagesMatching`. */
export function makeIngestConsumer(ports: Ports, settings: ConsumerSettings, logger: Logger): QueueConsumer {
  let handler: SqsBatchHandler = makeProcessFeedbackHandler(ports);
  if (settings.failMessagesMatching) handler = failMatching(handler, settings.failMessagesMatching);
  return createQueueConsumer({
    queue: ports.ingestQueue,
    handler,
    visibilityTimeoutSeconds: settings.visibilityTimeoutSeconds,
    logger,
  });
}

/** Reports every record whose body contains `marker` as failed without processing it (a fault drill). */
export function failMatching(handler: SqsBatchHandler, marker: string): SqsBatchHandler {
  return async (event: SQSEvent) => {
    const poisoned = event.Records.filter((r) => r.body.includes(marker));
    if (poisoned.length === 0) return handler(event);
    const rest = event.Records.filter((r) => !r.body.includes(marker));
    const response = rest.length > 0 ? await handler({ Records: rest }) : { batchItemFailures: [] };
    return {
      batchItemFailures: [...response.batchItemFailures, ...poisoned.map((r) => ({ itemIdentifier: r.messageId }))],
    };
  };
}

if (parentPort && (workerData as { flywheelConsumer?: ConsumerSettings } | undefined)?.flywheelConsumer) {
  const port = parentPort;
  const settings = (workerData as { flywheelConsumer: ConsumerSettings }).flywheelConsumer;
  const logger = new Logger({ serviceName: 'flywheel-local', logLevel: settings.logLevel as 'INFO' });
  const ports = openLocalPorts(settings.dataDir, { maxReceiveCount: settings.maxReceiveCount });
  const consumer = makeIngestConsumer(ports, settings, logger);
  consumer.start();
  // The failure-mode consumer runs here too, beside the processor whose events it tails: classifying and counting
  // every stored signal is work the HTTP thread must not do (it raised single-event p99 from 14 to 38 ms there).
  const modes = startLocalModesPipeline(ports, { dataDir: settings.dataDir, maxReceiveCount: settings.maxReceiveCount, logger });
  port.on('message', (message: unknown) => {
    if (message !== 'stop') return;
    void Promise.all([consumer.stop(), modes.stop()]).then(() => {
      ports.close();
      port.postMessage({ type: 'stopped', stats: consumer.stats });
      port.close();
    });
  });
}
