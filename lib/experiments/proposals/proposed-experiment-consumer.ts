/**
 * The `experiments/proposals` consumer: each SQS record is one EventBridge `experiment.proposed` event (the rule on the
 * Flywheel bus on AWS; the local runtime subscribes to its bus directly). Each drafts an experiment through the
 * event's tenant's view of the ports; a record that throws is reported in `batchItemFailures` (then the DLQ).
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { scopePortsToTenant, tenantOf } from '../../auth/tenant-ports.ts';
import { ValidationError } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import { EXPERIMENT_PROPOSED } from '../../training/runs/events.ts';
import type { Notify } from '../decisions/experiment-notices.ts';
import { draftProposedExperiment, type DraftOutcome } from './draft-proposed-experiment.ts';

/**
 * Handles one EventBridge-shaped body; other event types are ignored (`undefined`).
 *
 * @example
 * await draftFromProposalEvent(ports, record.body, { plannedUnitsPerArm: 5000 });
 */
export async function draftFromProposalEvent(ports: Ports & { notify?: Notify }, body: string, settings: { plannedUnitsPerArm: number }): Promise<DraftOutcome | undefined> {
  let event: { 'detail-type'?: unknown; detail?: unknown };
  try {
    event = JSON.parse(body) as typeof event;
  } catch {
    throw new ValidationError('experiment.proposed: the message is not JSON', [{ path: 'body', message: 'not JSON' }]);
  }
  if (event['detail-type'] !== EXPERIMENT_PROPOSED) return undefined;
  const detail = (event.detail ?? {}) as { tenant?: unknown };
  const scoped = scopePortsToTenant(ports, tenantOf(detail));
  return draftProposedExperiment({ ...scoped, ...(ports.notify ? { notify: ports.notify } : {}) }, detail, settings);
}

/**
 * @example
 * export const handler = middy(makeProposedExperimentHandler(ports, { plannedUnitsPerArm: 5000 }));
 */
export function makeProposedExperimentHandler(ports: Ports, settings: { plannedUnitsPerArm: number }): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const recordHandler = async (record: SQSRecord) => draftFromProposalEvent(ports, record.body, settings);
  return async (event: SQSEvent) => processPartialResponse(event, recordHandler, new BatchProcessor(EventType.SQS), { throwOnFullBatchFailure: false });
}
