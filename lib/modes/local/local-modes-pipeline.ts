/**
 * The failure-mode pipeline inside `npm start`, shaped like its AWS twin: a tail of the local event log stands in for
 * the EventBridge rule (`feedback.stored`, `report.stored` → a SQLite queue with a dead-letter queue), and the local
 * queue consumer runs the same SQS handler as the `modes/classify` Lambda. The tail's cursor is a record, so events
 * published while the runtime was down (or by the ingest thread, which has its own event bus instance) are picked up.
 */
import { join } from 'node:path';
import type { Logger } from '@aws-lambda-powertools/logger';
import { EVENT_SOURCE } from '../../ports/events.ts';
import type { LocalPorts } from '../../drivers/local/local-ports.ts';
import { openDatabase } from '../../drivers/local/sqlite-database.ts';
import { SqliteQueue } from '../../drivers/local/sqlite-queue.ts';
import { createQueueConsumer } from '../../drivers/local/queue-consumer.ts';
import { makeClassifyStoredHandler, MODES_EVENT_TYPES } from '../consumers/classify-stored.ts';
import { storedClassifier } from '../current-classifier.ts';
import { modesModelsFromEnv, type ModesModels } from '../modes-models.ts';
import { localEventCursorRecord } from '../record-codecs.ts';
import { modeKeys } from '../record-keys.ts';

export interface LocalModesPipeline {
  stop(): Promise<void>;
  queue: SqliteQueue;
  deadLetters: SqliteQueue;
}

export function startLocalModesPipeline(
  ports: Omit<LocalPorts, 'close'>,
  options: { dataDir: string; maxReceiveCount: number; logger?: Logger; models?: ModesModels; pollMs?: number; visibilityTimeoutSeconds?: number },
): LocalModesPipeline {
  const db = openDatabase(join(options.dataDir, 'modes-queue.sqlite'));
  const deadLetters = new SqliteQueue(db, 'modes-classify-dlq');
  const queue = new SqliteQueue(db, 'modes-classify', { deadLetter: deadLetters, maxReceiveCount: options.maxReceiveCount });
  const models = options.models ?? modesModelsFromEnv();
  if (!models.judge) options.logger?.info('failure modes: no judge model (FLYWHEEL_JUDGE_MODEL); unsure labels go to the review queue');
  if (!models.embedder) options.logger?.info('failure modes: no embedding model (FLYWHEEL_EMBEDDING_MODEL); comments are not clustered');
  const handler = makeClassifyStoredHandler({
    ports,
    classifier: storedClassifier(ports, { trainOn: 'worker' }),
    ...(models.judge ? { judge: models.judge } : {}),
    ...(models.embedder ? { embedder: models.embedder } : {}),
  });
  const consumer = createQueueConsumer({
    queue,
    handler,
    queueArn: 'arn:aws:sqs:local:000000000000:flywheel-modes-classify',
    visibilityTimeoutSeconds: options.visibilityTimeoutSeconds ?? 60,
    concurrency: 1,
    ...(options.logger ? { logger: options.logger } : {}),
  });
  consumer.start();

  let running = true;
  let timer: NodeJS.Timeout | undefined;
  let ticking: Promise<void> = Promise.resolve();
  const tick = async () => {
    const { pk, sk } = modeKeys.localEventCursor;
    let seq = localEventCursorRecord.decodeIfPresent(await ports.records.get(pk, sk))?.seq ?? 0;
    for (;;) {
      const batch = ports.events.after(seq, { types: MODES_EVENT_TYPES, limit: 100 });
      if (batch.length === 0) break;
      for (let i = 0; i < batch.length; i += 10) {
        await queue.sendBatch(
          batch.slice(i, i + 10).map((e) =>
            JSON.stringify({ version: '0', id: e.id, 'detail-type': e.type, source: EVENT_SOURCE, time: new Date(e.publishedAt).toISOString(), detail: e.detail }),
          ),
        );
      }
      seq = batch[batch.length - 1]!.seq;
      await ports.records.put(localEventCursorRecord.encode({ seq }));
    }
  };
  const loop = () => {
    if (!running) return;
    ticking = tick()
      .catch((error: unknown) => options.logger?.error('failure-mode event tail failed', { error: error as Error }))
      .finally(() => {
        if (running) timer = setTimeout(loop, options.pollMs ?? 250);
      });
  };
  loop();
  return {
    queue,
    deadLetters,
    async stop() {
      running = false;
      if (timer) clearTimeout(timer);
      await ticking;
      await consumer.stop();
      db.close();
    },
  };
}
