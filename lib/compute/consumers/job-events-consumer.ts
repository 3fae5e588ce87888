/**
 * The `compute/job-events` consumer on AWS: each SQS record is one EventBridge `Batch Job State Change` event of
 * `aws.batch` (the rule on the default bus, for Flywheel's job queues), handed to `recordJobStateChange`. Records are
 * processed one by one (two changes of one job in a batch are applied in turn; the use case is out-of-order safe
 * anyway). A record that throws (a child before its parent, a store error, a malformed event) is reported in
 * `batchItemFailures`, retried, then dead-lettered.
 *
 * @example
 * export const handler = middy(makeJobEventsHandler(ports));
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { Ports } from '../../ports/ports.ts';
import { jobStateChangeFromBatchEvent } from '../usage/job-state-change.ts';
import { recordJobStateChange } from '../usage/record-job-state-change.ts';

export function makeJobEventsHandler(ports: Pick<Ports, 'records' | 'now'> & Partial<Pick<Ports, 'events'>>): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const recordHandler = async (record: SQSRecord) => {
    const { job, duplicate } = await recordJobStateChange(ports, jobStateChangeFromBatchEvent(JSON.parse(record.body)));
    return { jobId: job.jobId, status: job.status, duplicate };
  };
  return async (event: SQSEvent) => processPartialResponse(event, recordHandler, new BatchProcessor(EventType.SQS), { throwOnFullBatchFailure: false });
}
