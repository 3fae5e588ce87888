/**
 * Timing of the feedback ingestion pipeline, shared by the data stack (queue), the pipeline stack (processor and its
 * event source) and the local runtime (its in-process queue), so the queue's visibility timeout can never drift below
 * what the consumer needs.
 */

/** The processor Lambda's timeout: a batch of 10 events is 10 conditional puts, one S3 object and one PutEvents. */
export const INGEST_PROCESSOR_TIMEOUT_SECONDS = 30;

/** Messages per processor invocation (SQS allows up to 10 without a batching window above 0). */
export const INGEST_BATCH_SIZE = 10;

/** How long the event source may wait to fill a batch before invoking the processor. */
export const INGEST_MAX_BATCHING_WINDOW_SECONDS = 5;

/**
 * The ingestion queue's visibility timeout. AWS asks for at least six times the consumer's timeout (so Lambda can
 * retry a throttled batch before the message reappears), plus the batching window during which a received message
 * already counts against its visibility:
 *   6 × 30 s + 5 s = 185 s.
 */
export const INGEST_VISIBILITY_TIMEOUT_SECONDS = 6 * INGEST_PROCESSOR_TIMEOUT_SECONDS + INGEST_MAX_BATCHING_WINDOW_SECONDS;

/** How long an undelivered ingestion message is kept; shorter than the dead-letter retention, which counts from the first enqueue. */
export const INGEST_RETENTION_DAYS = 4;
