import type { IEventBus } from 'aws-cdk-lib/aws-events';
import type { DataStack } from './data-stack.ts';

/**
 * The variables from which every function builds its AWS drivers (`functions/…`): the same set on every function, so
 * any entry can build the whole `Ports` bundle; what it may actually touch is decided by its grants.
 */
export function functionEnvironment(data: DataStack, bus: IEventBus): Record<string, string> {
  return {
    FLYWHEEL_TABLE: data.records.table.tableName,
    FLYWHEEL_BUCKET: data.blobs.bucket.bucketName,
    FLYWHEEL_INGEST_QUEUE_URL: data.ingest.queue.queueUrl,
    FLYWHEEL_INGEST_DLQ_URL: data.ingest.deadLetterQueue.queueUrl,
    FLYWHEEL_EVENT_BUS: bus.eventBusName,
    // The query port (Athena); reaching it takes `data.archive.grantArchiveQuery(fn)` as well.
    ...data.archive.environment,
  };
}
