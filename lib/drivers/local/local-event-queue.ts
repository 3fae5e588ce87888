/**
 * The local twin of "EventBridge rule → SQS queue with a dead-letter queue → consumer function", for `npm start`: a
 * tail of the local event log (`LocalEvents.after`) stands in for the rule and sends the events it matches, in the
 * EventBridge envelope, to a SQLite queue with its dead-letter queue; a local queue consumer runs the same SQS handler
 * as the Lambda. The tail's cursor is a record, so events published while the runtime was down (or by another thread,
 * which has its own bus instance) are picked up when it starts.
 *
 * @example
 * const pipeline = startLocalEventQueue({
 *   records: ports.records, events: ports.events, types: ['feedback.stored'],
 *   cursor: { key: { pk: 'MODESLOCAL', sk: 'EVENTCURSOR' }, codec: localEventCursorRecord },
 *   file: join(dataDir, 'modes-queue.sqlite'), queueName: 'modes-classify', deadLetterName: 'modes-classify-dlq',
 *   maxReceiveCount: 5, handler, queueArn: 'arn:aws:sqs:local:000000000000:flywheel-modes-classify',
 *   tailName: 'failure-mode', pollMs: 250,
 * });
 * await pipeline.close();
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { EVENT_SOURCE } from '../../ports/events.ts';
import type { RecordKeys, RecordsPort } from '../../ports/records.ts';
import type { RecordCodec } from '../../shared/record-codec.ts';
import type { PublishedEvent } from './local-events.ts';
import { createQueueConsumer, type SqsBatchHandler } from './queue-consumer.ts';
import { openDatabase } from './sqlite-database.ts';
import { SqliteQueue } from './sqlite-queue.ts';

/** What the tail reads: the local event log (`LocalEvents.after`). */
export interface LocalEventLog {
  after(seq: number, options: { types?: readonly string[]; limit?: number }): Array<Pick<PublishedEvent, 'seq' | 'id' | 'type' | 'detail' | 'publishedAt'>>;
}

export interface LocalEventQueueOptions {
  records: RecordsPort;
  events: LocalEventLog;
  /** The event types the stand-in rule matches. */
  types: readonly string[];
  /** Where the tail stands in the log: the record's keys and its codec. */
  cursor: { key: RecordKeys; codec: RecordCodec<{ seq: number }> };
  /** The SQLite file that holds the queue and its dead-letter queue. */
  file: string;
  queueName: string;
  deadLetterName: string;
  maxReceiveCount: number;
  handler: SqsBatchHandler;
  /** Shown as the records' `eventSourceARN`. */
  queueArn: string;
  /** Default 60. */
  visibilityTimeoutSeconds?: number | undefined;
  /** Default 1: one batch at a time. */
  concurrency?: number;
  /** Names the tail in its failure log line ("<tailName> event tail failed"). */
  tailName: string;
  /** Pause between tails of the log, in ms. */
  pollMs: number;
  logger?: Logger | undefined;
}

export interface LocalEventQueue {
  queue: SqliteQueue;
  deadLetters: SqliteQueue;
  /** Stops the tail, then the consumer (its batches in flight finish), then closes the database. */
  close(): Promise<void>;
}

export function startLocalEventQueue(options: LocalEventQueueOptions): LocalEventQueue {
  const { records, events, cursor, logger } = options;
  const db = openDatabase(options.file);
  const deadLetters = new SqliteQueue(db, options.deadLetterName);
  const queue = new SqliteQueue(db, options.queueName, { deadLetter: deadLetters, maxReceiveCount: options.maxReceiveCount });
  const consumer = createQueueConsumer({
    queue,
    handler: options.handler,
    queueArn: options.queueArn,
    visibilityTimeoutSeconds: options.visibilityTimeoutSeconds ?? 60,
    concurrency: options.concurrency ?? 1,
    ...(logger ? { logger } : {}),
  });
  consumer.start();

  let running = true;
  let timer: NodeJS.Timeout | undefined;
  let ticking: Promise<void> = Promise.resolve();
  const tick = async () => {
    let seq = cursor.codec.decodeIfPresent(await records.get(cursor.key.pk, cursor.key.sk))?.seq ?? 0;
    for (;;) {
      const batch = events.after(seq, { types: options.types, limit: 100 });
      if (batch.length === 0) break;
      for (let i = 0; i < batch.length; i += 10) {
        await queue.sendBatch(
          batch.slice(i, i + 10).map((e) => JSON.stringify({ version: '0', id: e.id, 'detail-type': e.type, source: EVENT_SOURCE, time: new Date(e.publishedAt).toISOString(), detail: e.detail })),
        );
      }
      seq = batch[batch.length - 1]!.seq;
      await records.put(cursor.codec.encode({ seq }));
    }
  };
  const loop = () => {
    if (!running) return;
    ticking = tick()
      .catch((error: unknown) => logger?.error(`${options.tailName} event tail failed`, { error: error as Error }))
      .finally(() => {
        if (running) timer = setTimeout(loop, options.pollMs);
      });
  };
  loop();
  return {
    queue,
    deadLetters,
    async close() {
      running = false;
      if (timer) clearTimeout(timer);
      await ticking;
      await consumer.stop();
      db.close();
    },
  };
}
