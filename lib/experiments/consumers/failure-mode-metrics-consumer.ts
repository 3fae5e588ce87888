/**
 * The `experiments/failure-mode-metrics` consumer on AWS: each SQS record is one EventBridge `failure-modes.labelled`
 * event (the rule on the Flywheel bus), handed to `handleFailureModeVerdicts`, which archives the signal's
 * `failure_mode.<mode>` rows (idempotent: one object per signal). A record that throws (the feedback event not stored
 * yet, a malformed detail) is reported in `batchItemFailures`, retried, then dead-lettered.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { Ports } from '../../ports/ports.ts';
import { handleFailureModeVerdicts, type LabelledEvent } from './failure-mode-metrics.ts';

/**
 * @example
 * export const handler = middy(makeFailureModeMetricsHandler(ports));
 */
export function makeFailureModeMetricsHandler(ports: Ports): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const recordHandler = async (record: SQSRecord) => handleFailureModeVerdicts(ports, [JSON.parse(record.body) as LabelledEvent]);
  return async (event: SQSEvent) => processPartialResponse(event, recordHandler, new BatchProcessor(EventType.SQS), { throwOnFullBatchFailure: false });
}
