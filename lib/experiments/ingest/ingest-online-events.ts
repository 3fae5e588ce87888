/**
 * `POST /v1/metrics` and `POST /v1/exposures`: one item or a batch of up to 500, each validated on its own (the
 * machinery feedback uses: `checkIngestItems`), `occurredAt` normalised to UTC, the request's `receivedAt` added, and
 * every accepted item made durable as ONE ingest-queue message (`metric` or `exposure` envelope, spilled to blobs when
 * large). The record store is the processor's (`store-online-events.ts`), so a 202 means "will be stored".
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ValidationError } from '../../errors.ts';
import { envelopeMessageBody, type IngestEnvelope } from '../../feedback/ingest-envelope.ts';
import type { Ports } from '../../ports/ports.ts';
import type { FieldIssue } from '../../shared/field-issues.ts';
import { checkIngestItems, type IngestItemResult } from '../../shared/ingest-items.ts';
import { ExposureBatchShape, ExposureInput, MetricBatchShape, MetricEventInput } from '../schemas.ts';
import { validateOnlineEvent } from './validate-online-event.ts';

const Issue = z.object({ path: z.string(), message: z.string() });
const status = z.enum(['accepted', 'duplicate', 'rejected']);

/** The answer of `POST /v1/metrics`: per item, in request order. */
export const MetricIngestResult = z
  .object({
    ingestId: z.string(),
    accepted: z.int(),
    duplicates: z.int(),
    rejected: z.int(),
    results: z.array(z.object({ index: z.int().nonnegative(), metricEventId: z.string().optional(), status, issues: z.array(Issue).optional() })),
  })
  .openapi('MetricIngestResult', { description: '202 when at least one item was accepted; 400 when every item was rejected.' });

/** The answer of `POST /v1/exposures`. */
export const ExposureIngestResult = z
  .object({
    ingestId: z.string(),
    accepted: z.int(),
    duplicates: z.int(),
    rejected: z.int(),
    results: z.array(z.object({ index: z.int().nonnegative(), exposureId: z.string().optional(), status, issues: z.array(Issue).optional() })),
  })
  .openapi('ExposureIngestResult', { description: '202 when at least one item was accepted; 400 when every item was rejected.' });

export interface OnlineIngestOutcome<K extends string> {
  /** 202 when at least one item was accepted (the request is durable), 400 when every item was rejected. */
  status: 202 | 400;
  result: { ingestId: string; accepted: number; duplicates: number; rejected: number; results: Array<IngestItemResult<K>> };
  /** Every rejected item's issues, flattened (paths carry the item index). */
  issues: FieldIssue[];
  spooled: boolean;
}

interface OnlineKind<T, K extends string> {
  kind: 'metric' | 'exposure';
  batchField: 'metrics' | 'exposures';
  batchShape: z.ZodType;
  schema: z.ZodType<T>;
  idField: K;
  idOf: (value: T) => string;
  /** Counter prefix (`MetricEvents` → `MetricEventsAccepted`, …). */
  counter: string;
  what: string;
}

const METRICS: OnlineKind<z.output<typeof MetricEventInput>, 'metricEventId'> = {
  kind: 'metric',
  batchField: 'metrics',
  batchShape: MetricBatchShape,
  schema: MetricEventInput,
  idField: 'metricEventId',
  idOf: (m) => m.metricEventId,
  counter: 'MetricEvents',
  what: 'metric event',
};

const EXPOSURES: OnlineKind<z.output<typeof ExposureInput>, 'exposureId'> = {
  kind: 'exposure',
  batchField: 'exposures',
  batchShape: ExposureBatchShape,
  schema: ExposureInput,
  idField: 'exposureId',
  idOf: (e) => e.exposureId,
  counter: 'Exposures',
  what: 'exposure',
};

async function ingestOnline<T extends { occurredAt: string }, K extends string>(ports: Ports, body: unknown, k: OnlineKind<T, K>): Promise<OnlineIngestOutcome<K>> {
  const now = ports.now();
  const nowMs = now.getTime();
  const receivedAt = now.toISOString();
  const ingestId = randomUUID();
  const checked = checkIngestItems(body, {
    batchField: k.batchField,
    batchShape: k.batchShape,
    what: `${k.what} batch`,
    idField: k.idField,
    validate: (raw, prefix) => validateOnlineEvent(k.schema, raw, nowMs, prefix),
    idOf: k.idOf,
  });
  const items: Array<T & { receivedAt: string }> = [];
  for (const { value } of checked.accepted) {
    // The parsed value is a fresh object owned by us: complete it in place. UTC, so the day partition is the UTC day.
    const item = value as T & { receivedAt: string };
    item.occurredAt = new Date(item.occurredAt).toISOString();
    item.receivedAt = receivedAt;
    items.push(item);
  }
  const rejected = checked.count - items.length - checked.duplicates;
  ports.metrics?.count(`${k.counter}Rejected`, rejected);
  const result = { ingestId, accepted: items.length, duplicates: checked.duplicates, rejected, results: checked.results };
  if (items.length === 0) {
    if (!checked.isBatch) throw new ValidationError(`Invalid ${k.what}`, checked.issues);
    return { status: 400, result, issues: checked.issues, spooled: false };
  }
  // The kind and its items' type travel together in `k` (METRICS, EXPOSURES): one of the envelope's two shapes.
  const envelope = { v: 1, ingestId, kind: k.kind, receivedAt, items } as unknown as IngestEnvelope;
  const { body: message, spooled } = await envelopeMessageBody(ports.blobs, envelope);
  await ports.ingestQueue.send(message);
  ports.metrics?.count(`${k.counter}Accepted`, items.length);
  if (checked.duplicates > 0) ports.metrics?.count(`${k.counter}DuplicateInRequest`, checked.duplicates);
  return { status: 202, result, issues: checked.issues, spooled };
}

/**
 * Accepts one metric event or `{ metrics: [...] }`. A single event that fails validation throws `ValidationError`;
 * a batch answers per item.
 *
 * @example
 * const { status, result } = await ingestMetricEvents(ports, { metrics: [{ metricEventId: 'm1', metric: 'latency_ms', value: 840, … }] });
 * // status 202, result.results: [{ index: 0, metricEventId: 'm1', status: 'accepted' }]
 */
export function ingestMetricEvents(ports: Ports, body: unknown): Promise<OnlineIngestOutcome<'metricEventId'>> {
  return ingestOnline(ports, body, METRICS);
}

/**
 * Accepts one exposure or `{ exposures: [...] }`, as `ingestMetricEvents` does.
 *
 * @example
 * const { status } = await ingestExposures(ports, { exposureId: 'x1', experiment: 'exp-1', arm: 'b', checkpoint: 'ckpt-9', unitType: 'user', unitId: 'u1', occurredAt });
 */
export function ingestExposures(ports: Ports, body: unknown): Promise<OnlineIngestOutcome<'exposureId'>> {
  return ingestOnline(ports, body, EXPOSURES);
}
