import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { Ports } from '../../ports/ports.ts';
import { processFeedbackMessage } from '../process-feedback-message.ts';

/**
 * The ingestion queue consumer: each SQS record is one ingest envelope, processed by `processFeedbackMessage`.
 * A record that throws is reported in `batchItemFailures` (Powertools' BatchProcessor), so only it is redelivered
 * and, after `maxReceiveCount` receives, dead-lettered; its siblings are deleted.
 *
 * The local runtime calls this same function with SQS-shaped events built from the local queue.
 *
 * @example
 * export const handler = middy(makeProcessFeedbackHandler(awsPortsFromEnv())).use(injectLambdaContext(logger));
 */
export function makeProcessFeedbackHandler(ports: Ports): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const recordHandler = async (record: SQSRecord) => processFeedbackMessage(ports, record.body);
  return async (event: SQSEvent) => {
    // One processor per invocation: a BatchProcessor holds the state of the batch in flight, and the local runtime
    // may run several batches at once.
    const processor = new BatchProcessor(EventType.SQS);
    return processPartialResponse(event, recordHandler, processor, { throwOnFullBatchFailure: false });
  };
}
