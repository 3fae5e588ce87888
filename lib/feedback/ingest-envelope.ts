import type { Exposure, MetricEvent } from '../experiments/schemas.ts';
import type { BlobsPort } from '../ports/blobs.ts';
import type { FeedbackEvent, Report } from './schemas.ts';
import { blobKeys } from './record-keys.ts';

/** An online metric event as accepted: defaults filled, `occurredAt` in UTC, the request's `receivedAt`. */
export type IngestedMetricEvent = MetricEvent & { receivedAt: string };
/** An exposure as accepted. */
export type IngestedExposure = Exposure & { receivedAt: string };

/**
 * What one ingest request becomes on the queue: all its accepted items, in one message. `metric` and `exposure`
 * (`POST /v1/metrics`, `POST /v1/exposures`) ride the same queue and processor as feedback.
 */
export type IngestEnvelope =
  | { v: 1; ingestId: string; kind: 'feedback'; receivedAt: string; items: FeedbackEvent[] }
  | { v: 1; ingestId: string; kind: 'report'; receivedAt: string; items: Report[] }
  | { v: 1; ingestId: string; kind: 'metric'; receivedAt: string; items: IngestedMetricEvent[] }
  | { v: 1; ingestId: string; kind: 'exposure'; receivedAt: string; items: IngestedExposure[] };

export type IngestKind = IngestEnvelope['kind'];
const INGEST_KINDS: ReadonlySet<string> = new Set<IngestKind>(['feedback', 'report', 'metric', 'exposure']);

/** Sent instead of the envelope when it exceeds the queue message limit; the envelope is in blobs. */
export interface SpooledEnvelopePointer {
  v: 1;
  ingestId: string;
  kind: IngestKind;
  receivedAt: string;
  spooled: { blobKey: string };
}

/**
 * SQS allows 1 MiB per message, but 256 KiB keeps us within the limit of every queue (and of SNS/EventBridge
 * should the message ever be forwarded) with room for attributes.
 */
export const QUEUE_MESSAGE_MAX_BYTES = 256 * 1024;

/**
 * Serialises the envelope once; spills it to `spool/ingest/<ingestId>.json` and returns a pointer body when it
 * is over the queue limit.
 */
export async function envelopeMessageBody(blobs: BlobsPort, envelope: IngestEnvelope): Promise<{ body: string; spooled: boolean }> {
  const body = JSON.stringify(envelope);
  // A string of n UTF-16 units is at most 3n UTF-8 bytes: skip the exact count when it cannot matter.
  if (body.length * 3 <= QUEUE_MESSAGE_MAX_BYTES || Buffer.byteLength(body, 'utf8') <= QUEUE_MESSAGE_MAX_BYTES) {
    return { body, spooled: false };
  }
  const blobKey = blobKeys.spooledEnvelope(envelope.ingestId);
  await blobs.put(blobKey, body, { contentType: 'application/json' });
  const pointer: SpooledEnvelopePointer = {
    v: 1,
    ingestId: envelope.ingestId,
    kind: envelope.kind,
    receivedAt: envelope.receivedAt,
    spooled: { blobKey },
  };
  return { body: JSON.stringify(pointer), spooled: true };
}

/** Reads a queue message body back into its envelope, following a spool pointer. Throws on a malformed body. */
export async function readEnvelope(blobs: BlobsPort, body: string): Promise<IngestEnvelope> {
  const parsed = JSON.parse(body) as Partial<IngestEnvelope & SpooledEnvelopePointer>;
  if (parsed === null || typeof parsed !== 'object' || parsed.v !== 1 || typeof parsed.ingestId !== 'string') {
    throw new Error('Not an ingest envelope (expected { v: 1, ingestId, kind, ... })');
  }
  if (parsed.spooled) {
    const bytes = await blobs.get(parsed.spooled.blobKey);
    if (!bytes) throw new Error(`Spooled envelope ${parsed.spooled.blobKey} is missing`);
    return readEnvelope(blobs, Buffer.from(bytes).toString('utf8'));
  }
  if (typeof parsed.kind !== 'string' || !INGEST_KINDS.has(parsed.kind) || !Array.isArray(parsed.items)) {
    throw new Error(`Ingest envelope ${parsed.ingestId} has no items of a known kind`);
  }
  return parsed as IngestEnvelope;
}
