import { randomUUID } from 'node:crypto';
import type { FieldIssue } from '../shared/field-issues.ts';
import { checkIngestItems } from '../shared/ingest-items.ts';
import { ValidationError } from '../errors.ts';
import type { Ports } from '../ports/ports.ts';
import { envelopeMessageBody, type IngestEnvelope } from './ingest-envelope.ts';
import { blobKeys } from './record-keys.ts';
import { FeedbackBatchShape, type FeedbackEvent, type IngestResult } from './schemas.ts';
import { validateFeedbackEvent } from './validate-feedback-input.ts';

export interface IngestFeedbackOutcome {
  /** 202 when at least one event was accepted (the request is durable), 400 when every event was rejected. */
  status: 202 | 400;
  result: IngestResult;
  /** Every rejected item's issues, flattened (paths carry the item index). */
  issues: FieldIssue[];
  /** Whether the envelope went to blobs because it exceeded the queue message limit. */
  spooled: boolean;
}

/**
 * Accepts one feedback event or `{ events: [...] }`: validates each item on its own, moves inline trajectories to
 * blobs, and makes every accepted item durable as ONE queue message (spilled to blobs when too large). It never
 * touches the record store: the processor does that, so the API answers fast and a 202 means "will be stored".
 *
 * A single event that fails validation throws `ValidationError`; a batch answers per item.
 *
 * @example
 * const { status, result } = await ingestFeedback(ports, { events: [e1, e2] });
 * // status 202, result.results: [{ index: 0, eventId: 'e1', status: 'accepted' }, …]
 */
export async function ingestFeedback(ports: Ports, body: unknown): Promise<IngestFeedbackOutcome> {
  const now = ports.now();
  const nowMs = now.getTime();
  const receivedAt = now.toISOString();
  const ingestId = randomUUID();

  const checked = checkIngestItems(body, {
    batchField: 'events',
    batchShape: FeedbackBatchShape,
    what: 'feedback batch',
    idField: 'eventId',
    validate: (raw, prefix) => validateFeedbackEvent(raw, nowMs, prefix),
    idOf: (e) => e.eventId,
  });
  const { isBatch, results, issues, duplicates } = checked;
  const accepted: Array<{ index: number; event: FeedbackEvent }> = [];
  const trajectoryPuts: Promise<void>[] = [];
  const referenced: Array<{ index: number; blobKey: string }> = [];

  for (const { index: i, value } of checked.accepted) {
    // The parsed value is a fresh object owned by us: complete it in place instead of copying.
    const e = value as unknown as FeedbackEvent & { trajectory?: { blobKey?: string; inline?: unknown } };
    // UTC, so that string order is time order (vote ordering and day partitions rely on it).
    e.occurredAt = new Date(e.occurredAt).toISOString();
    e.feedbackKey ??= `${e.traceId}:${e.turnId}:${e.reporter}`;
    e.receivedAt = receivedAt;
    if (e.trajectory && 'inline' in e.trajectory) {
      // The server chooses the key (the ports are the tenant's: it lands in the tenant's blobs).
      const blobKey = blobKeys.trajectory(e.eventId);
      trajectoryPuts.push(ports.blobs.put(blobKey, JSON.stringify(e.trajectory.inline), { contentType: 'application/json' }));
      e.trajectory = { blobKey };
    } else if (e.trajectory?.blobKey !== undefined) {
      referenced.push({ index: i, blobKey: e.trajectory.blobKey });
    }
    accepted.push({ index: i, event: e });
  }

  // A referenced trajectory must be one this tenant stored (its view of the blobs holds only its own keys).
  if (referenced.length > 0) {
    const missing = new Set<number>();
    await Promise.all(
      referenced.map(async ({ index, blobKey }) => {
        if ((await ports.blobs.get(blobKey)) === undefined) missing.add(index);
      }),
    );
    for (const index of missing) {
      const issue = { path: `${isBatch ? `events[${index}].` : ''}trajectory.blobKey`, message: 'names no trajectory stored by this tenant' };
      results[index] = { index, eventId: results[index]!.eventId!, status: 'rejected', issues: [issue] };
      issues.push(issue);
    }
  }
  const items: FeedbackEvent[] = [];
  for (const { index, event } of accepted) if (results[index]!.status === 'accepted') items.push(event);

  const rejected = checked.count - items.length - duplicates;
  ports.metrics?.count('EventsRejected', rejected);
  if (items.length === 0) {
    if (!isBatch) throw new ValidationError('Invalid feedback event', issues);
    return {
      status: 400,
      result: { ingestId, accepted: 0, duplicates, rejected, results },
      issues,
      spooled: false,
    };
  }

  await Promise.all(trajectoryPuts);
  const envelope: IngestEnvelope = { v: 1, ingestId, kind: 'feedback', receivedAt, items };
  const { body: message, spooled } = await envelopeMessageBody(ports.blobs, envelope);
  await ports.ingestQueue.send(message);
  ports.metrics?.count('EventsAccepted', items.length);
  if (duplicates > 0) ports.metrics?.count('EventsDuplicateInRequest', duplicates);
  return { status: 202, result: { ingestId, accepted: items.length, duplicates, rejected, results }, issues, spooled };
}
