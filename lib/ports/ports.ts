import type { BlobsPort } from './blobs.ts';
import type { EventsPort } from './events.ts';
import type { JobsPort } from './jobs.ts';
import type { MetricsPort } from './metrics.ts';
import type { QueryPort } from './query.ts';
import type { QueuePort } from './queue.ts';
import type { RecordsPort } from './records.ts';
import type { WorkflowsPort } from './workflows.ts';

/**
 * The ports a handler or job is handed. Built once per process: from AWS drivers in `functions/…`,
 * from local drivers in the local runtime (`lib/local/`), and from either in tests.
 */
export interface Ports {
  records: RecordsPort;
  blobs: BlobsPort;
  /** The feedback ingestion queue. */
  ingestQueue: QueuePort;
  /** The ingestion queue's dead-letter queue. */
  ingestDeadLetters: QueuePort;
  events: EventsPort;
  /** Optional counters (Powertools Metrics on Lambda); absent means no metrics are emitted. */
  metrics?: MetricsPort;
  /** Batch jobs under the five compute categories; absent where a process submits none (Lambda handlers). */
  jobs?: JobsPort;
  /** State machine executions (`sweep`, …); absent where a process starts none. `POST /v1/sweeps` needs it. */
  workflows?: WorkflowsPort;
  /** SQL over the raw archive (Athena on AWS, DuckDB locally); absent where a process runs no analysis. */
  query?: QueryPort;
  /** Injected so tests control time. */
  now: () => Date;
}
