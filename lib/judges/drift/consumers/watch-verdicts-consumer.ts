/**
 * The `judges/drift-watch` consumer: each SQS record is one EventBridge `judge.verdict` event (delivered by the rule
 * on the Flywheel bus, or by the local runtime's tail of its event log). The verdict is queued for people when it is
 * a judge–user disagreement or falls in the sample (`watchVerdict`). Enqueueing is idempotent (an item's id is its
 * queue and subject), so a redelivered event queues nothing twice; a record that throws is reported in
 * `batchItemFailures`.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { scopePortsToTenant, tenantOf } from '../../../auth/tenant-ports.ts';
import type { Ports } from '../../../ports/ports.ts';
import { JUDGE_VERDICT } from '../../events.ts';
import { verdictDetailOf, watchVerdict, type WatchOptions, type WatchOutcome } from '../watch-verdicts.ts';

/** The event types the drift watch reads. */
export const DRIFT_EVENT_TYPES = [JUDGE_VERDICT] as const;
/** The share of production verdicts sampled for people (0–1); default 0.05. */
export const DRIFT_SAMPLE_FRACTION_ENV = 'FLYWHEEL_DRIFT_SAMPLE_FRACTION';

/** Watch options from the environment. */
export function watchOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): WatchOptions {
  const raw = env[DRIFT_SAMPLE_FRACTION_ENV];
  const fraction = raw === undefined || raw === '' ? undefined : Number(raw);
  return fraction !== undefined && Number.isFinite(fraction) && fraction >= 0 && fraction <= 1 ? { sampleFraction: fraction } : {};
}

/** Handles one EventBridge-shaped event body; other event types are ignored (`undefined`). */
export async function watchVerdictEvent(ports: Ports, body: string, options: WatchOptions = {}): Promise<WatchOutcome | undefined> {
  const detail = verdictDetailOf(body);
  if (!detail) return undefined;
  // The event names its tenant's subject: queue it through that tenant's view of the ports.
  const scoped = scopePortsToTenant(ports, tenantOf(detail));
  return (await watchVerdict(scoped, detail, options)).outcome;
}

/**
 * @example
 * export const handler = middy(makeWatchVerdictsHandler(ports, watchOptionsFromEnv()));
 */
export function makeWatchVerdictsHandler(ports: Ports, options: WatchOptions = {}): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const recordHandler = async (record: SQSRecord) => watchVerdictEvent(ports, record.body, options);
  return async (event: SQSEvent) => {
    const processor = new BatchProcessor(EventType.SQS);
    return processPartialResponse(event, recordHandler, processor, { throwOnFullBatchFailure: false });
  };
}
