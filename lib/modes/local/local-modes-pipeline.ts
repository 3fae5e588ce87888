/**
 * The failure-mode pipeline inside `npm start`, shaped like its AWS twin: a tail of the local event log stands in for
 * the EventBridge rule (`feedback.stored`, `report.stored` → a SQLite queue with a dead-letter queue), and the local
 * queue consumer runs the same SQS handler as the `modes/classify` Lambda. The tail's cursor is a record, so events
 * published while the runtime was down (or by the ingest thread, which has its own event bus instance) are picked up.
 */
import { join } from 'node:path';
import type { Logger } from '@aws-lambda-powertools/logger';
import { startLocalEventQueue } from '../../drivers/local/local-event-queue.ts';
import type { LocalPorts } from '../../drivers/local/local-ports.ts';
import type { SqliteQueue } from '../../drivers/local/sqlite-queue.ts';
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
  const models = options.models ?? modesModelsFromEnv();
  if (!models.judge) options.logger?.info('failure modes: no judge model (FLYWHEEL_JUDGE_MODEL); unsure labels go to the review queue');
  if (!models.embedder) options.logger?.info('failure modes: no embedding model (FLYWHEEL_EMBEDDING_MODEL); comments are not clustered');
  const handler = makeClassifyStoredHandler({
    ports,
    classifier: storedClassifier(ports, { trainOn: 'worker' }),
    ...(models.judge ? { judge: models.judge } : {}),
    ...(models.embedder ? { embedder: models.embedder } : {}),
  });
  const { queue, deadLetters, close } = startLocalEventQueue({
    records: ports.records,
    events: ports.events,
    types: MODES_EVENT_TYPES,
    cursor: { key: modeKeys.localEventCursor, codec: localEventCursorRecord },
    file: join(options.dataDir, 'modes-queue.sqlite'),
    queueName: 'modes-classify',
    deadLetterName: 'modes-classify-dlq',
    maxReceiveCount: options.maxReceiveCount,
    handler,
    queueArn: 'arn:aws:sqs:local:000000000000:flywheel-modes-classify',
    visibilityTimeoutSeconds: options.visibilityTimeoutSeconds,
    concurrency: 1,
    tailName: 'failure-mode',
    pollMs: options.pollMs ?? 250,
    logger: options.logger,
  });
  return { queue, deadLetters, stop: close };
}
