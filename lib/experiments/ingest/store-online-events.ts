/**
 * The processor's step for `metric` and `exposure` messages (`POST /v1/metrics`, `POST /v1/exposures`): each item's
 * seen-marker put once (idempotent by its client id), then the items this message owns archived as rows, one JSON
 * Lines object per day of `occurredAt`, under the tenant's partition of the raw archive.
 *
 * A crash between the markers and the archive loses nothing: the redelivered message finds markers that carry its own
 * ingestId, counts those items as its own, and writes the same objects again (same keys, same rows).
 */
import { utcDay } from '../../feedback/record-keys.ts';
import type { IngestedExposure, IngestedMetricEvent } from '../../feedback/ingest-envelope.ts';
import type { BlobsPort } from '../../ports/blobs.ts';
import type { MetricsPort } from '../../ports/metrics.ts';
import type { RecordsPort } from '../../ports/records.ts';
import { putOnce } from '../../shared/put-once.ts';
import { exposureRowOf, metricRowOf } from '../archive/archive-rows.ts';
import { writeExposureRows, writeMetricRows } from '../archive/write-archive-rows.ts';
import { archiveKeys } from '../record-keys.ts';
import type { ExposureRow, MetricRow } from '../schemas.ts';
import { exposureSeenRecord, metricEventSeenRecord } from './record-codecs.ts';

export type OnlineEnvelope =
  | { ingestId: string; kind: 'metric'; receivedAt: string; items: IngestedMetricEvent[] }
  | { ingestId: string; kind: 'exposure'; receivedAt: string; items: IngestedExposure[] };

export interface OnlineStorePorts {
  /** The tenant's records (its view: markers live in its partition). */
  records: RecordsPort;
  /** The ROOT blobs: the archive key names the tenant as a partition. */
  rootBlobs: BlobsPort;
  metrics?: MetricsPort | undefined;
}

export interface StoredOnlineEvents {
  /** Ids this delivery stored (including those an earlier crashed attempt of this same message marked). */
  storedIds: string[];
  /** Items another message had stored already. */
  duplicates: number;
  /** The archive objects written, one per day of `occurredAt`. */
  archiveKeys: string[];
}

/** Groups rows by the UTC day of their `occurred_at`. */
function byDay<R extends { occurred_at: string }>(rows: readonly R[]): Map<string, R[]> {
  const days = new Map<string, R[]>();
  for (const row of rows) {
    const day = utcDay(row.occurred_at);
    const list = days.get(day);
    if (list) list.push(row);
    else days.set(day, [row]);
  }
  return days;
}

/**
 * Stores one message of metric events or exposures for `tenant`.
 *
 * @example
 * const { storedIds, duplicates, archiveKeys } = await storeOnlineEvents({ records: ports.records, rootBlobs: rootPorts.blobs }, 'default', envelope);
 */
export async function storeOnlineEvents(ports: OnlineStorePorts, tenant: string, envelope: OnlineEnvelope): Promise<StoredOnlineEvents> {
  const { ingestId } = envelope;
  const written: string[] = [];
  if (envelope.kind === 'metric') {
    const markers = envelope.items.map((e) => ({ metricEventId: e.metricEventId, ingestId, receivedAt: e.receivedAt }));
    const { stored, duplicates } = await putOnce(ports.records, ingestId, metricEventSeenRecord, markers);
    const owned = new Set(stored.map((m) => m.metricEventId));
    const rows: MetricRow[] = [];
    for (const e of envelope.items) if (owned.has(e.metricEventId)) rows.push(metricRowOf(e));
    for (const [day, dayRows] of byDay(rows)) {
      const key = archiveKeys.metrics(tenant, day, ingestId);
      await writeMetricRows(ports.rootBlobs, tenant, key, dayRows);
      written.push(key);
    }
    ports.metrics?.count('MetricEventsStored', rows.length);
    ports.metrics?.count('MetricEventsDuplicate', duplicates);
    return { storedIds: rows.map((r) => r.id), duplicates, archiveKeys: written };
  }
  const markers = envelope.items.map((e) => ({ exposureId: e.exposureId, ingestId, receivedAt: e.receivedAt }));
  const { stored, duplicates } = await putOnce(ports.records, ingestId, exposureSeenRecord, markers);
  const owned = new Set(stored.map((m) => m.exposureId));
  const rows: ExposureRow[] = [];
  for (const e of envelope.items) if (owned.has(e.exposureId)) rows.push(exposureRowOf(e));
  for (const [day, dayRows] of byDay(rows)) {
    const key = archiveKeys.exposures(tenant, day, ingestId);
    await writeExposureRows(ports.rootBlobs, tenant, key, dayRows);
    written.push(key);
  }
  ports.metrics?.count('ExposuresStored', rows.length);
  ports.metrics?.count('ExposuresDuplicate', duplicates);
  return { storedIds: rows.map((r) => r.id), duplicates, archiveKeys: written };
}
