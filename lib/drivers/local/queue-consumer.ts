import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { QueueMessage, QueuePort } from '../../ports/queue.ts';

/** A queue handler in the Lambda SQS event source shape, reporting partial batch failures. */
export type SqsBatchHandler = (event: SQSEvent) => Promise<SQSBatchResponse>;

export interface QueueConsumerOptions {
  queue: QueuePort;
  handler: SqsBatchHandler;
  /** Shown as the records' `eventSourceARN`, so handlers that log it see a familiar value. */
  queueArn?: string;
  /** Messages per receive, 1–10 (the Lambda event source's batch size). Default 10. */
  batchSize?: number;
  /** Seconds a received message stays hidden; failures reappear after it. Default 30. */
  visibilityTimeoutSeconds?: number;
  /** Pollers working at once. Default 2. */
  concurrency?: number;
  /** Long-poll this long when the queue is empty (a local send wakes the poller at once). Default 1. */
  waitSeconds?: number;
  /** Pause when the queue came back empty, in ms. Default 0 (the long poll already waited). */
  idleDelayMs?: number;
  logger?: Logger;
}

export interface QueueConsumer {
  start(): void;
  /** Stops polling and waits for the batches in flight to finish (their successes are deleted). */
  stop(): Promise<void>;
  readonly stats: { received: number; succeeded: number; failed: number; batches: number };
}

/**
 * The local stand-in for Lambda's SQS event source: polls the queue, hands the handler SQS-shaped batches, deletes
 * the records it did not report as failed, and leaves failures to reappear after the visibility timeout, so a
 * message that keeps failing reaches the dead-letter queue after `maxReceiveCount` receives, as on AWS.
 *
 * @example
 * const consumer = createQueueConsumer({ queue: ports.ingestQueue, handler: makeProcessFeedbackHandler(ports) });
 * consumer.start();
 * process.on('SIGTERM', () => consumer.stop());
 */
export function createQueueConsumer(options: QueueConsumerOptions): QueueConsumer {
  const { queue, handler, logger } = options;
  const batchSize = Math.min(10, Math.max(1, options.batchSize ?? 10));
  const visibility = options.visibilityTimeoutSeconds ?? 30;
  const concurrency = Math.max(1, options.concurrency ?? 2);
  const idleDelayMs = options.idleDelayMs ?? 0;
  const waitSeconds = options.waitSeconds ?? 1;
  const queueArn = options.queueArn ?? 'arn:aws:sqs:local:000000000000:flywheel-ingest';
  const stats = { received: 0, succeeded: 0, failed: 0, batches: 0 };
  let running = false;
  let loops: Promise<void>[] = [];
  const sleepers = new Set<() => void>();

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      sleepers.add(done);
    });

  async function pollOnce(): Promise<number> {
    const messages = await queue.receive({ maxMessages: batchSize, visibilityTimeoutSeconds: visibility, waitSeconds });
    if (messages.length === 0) return 0;
    stats.received += messages.length;
    stats.batches++;
    const event: SQSEvent = { Records: messages.map((m) => toSqsRecord(m, queueArn)) };
    let failedIds: Set<string>;
    try {
      const response = await handler(event);
      failedIds = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (error) {
      // A thrown handler fails the whole batch, as with Lambda: every message comes back after the timeout.
      logger?.error('queue handler threw; batch will be retried', { error: error as Error, size: messages.length });
      failedIds = new Set(messages.map((m) => m.messageId));
    }
    for (const m of messages) {
      if (failedIds.has(m.messageId)) continue;
      await queue.delete(m.receiptHandle);
    }
    stats.failed += failedIds.size;
    stats.succeeded += messages.length - failedIds.size;
    if (failedIds.size > 0) {
      logger?.warn('messages failed; they reappear after the visibility timeout', {
        failed: [...failedIds],
        receiveCounts: messages.filter((m) => failedIds.has(m.messageId)).map((m) => m.receiveCount),
        visibilityTimeoutSeconds: visibility,
      });
    } else {
      logger?.debug('batch processed', { size: messages.length });
    }
    return messages.length;
  }

  async function loop(): Promise<void> {
    while (running) {
      let n: number;
      try {
        n = await pollOnce();
      } catch (error) {
        logger?.error('queue poll failed', { error: error as Error });
        await sleep(500);
        continue;
      }
      if (n === 0 && running && idleDelayMs > 0) await sleep(idleDelayMs);
      else if (n > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  return {
    stats,
    start() {
      if (running) return;
      running = true;
      loops = Array.from({ length: concurrency }, () => loop());
      logger?.info('queue consumer started', { batchSize, visibilityTimeoutSeconds: visibility, concurrency });
    },
    async stop() {
      if (!running) return;
      running = false;
      for (const wake of [...sleepers]) wake();
      await Promise.all(loops);
      loops = [];
      logger?.info('queue consumer stopped', { ...stats });
    },
  };
}

/** One queue message in the shape Lambda's SQS event source delivers. */
export function toSqsRecord(m: QueueMessage, queueArn: string): SQSRecord {
  return {
    messageId: m.messageId,
    receiptHandle: m.receiptHandle,
    body: m.body,
    attributes: {
      ApproximateReceiveCount: String(m.receiveCount),
      SentTimestamp: String(m.sentAt),
      SenderId: 'local',
      ApproximateFirstReceiveTimestamp: String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: 'local',
  };
}
