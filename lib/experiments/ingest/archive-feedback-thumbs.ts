/**
 * Derived rows of the feedback the processor stores: each rated event (up or down) becomes a `feedback.thumb` metric
 * row (1 up, 0 down; the reporter is the unit), archived beside the online metrics so analyses read thumbs with the
 * same SQL. One object per day of `occurredAt` per message (`derived-<ingestId>`), overwritten on a retry.
 */
import { utcDay } from '../../feedback/record-keys.ts';
import type { BlobsPort } from '../../ports/blobs.ts';
import { thumbRowOf, type FeedbackRowSource } from '../archive/archive-rows.ts';
import { writeMetricRows } from '../archive/write-archive-rows.ts';
import { archiveKeys } from '../record-keys.ts';
import type { MetricRow } from '../schemas.ts';

/**
 * Archives the thumb rows of the feedback events one message stored; returns the keys written (none when no event
 * was rated).
 *
 * @example
 * await archiveFeedbackThumbs(rootPorts.blobs, 'default', ingestId, storedEvents); // ['raw/metrics/tenant=default/dt=2026-12-04/derived-<ingestId>.jsonl']
 */
export async function archiveFeedbackThumbs(
  rootBlobs: BlobsPort,
  tenant: string,
  ingestId: string,
  events: ReadonlyArray<FeedbackRowSource & { rating: 'up' | 'down' | 'none' }>,
): Promise<string[]> {
  const days = new Map<string, MetricRow[]>();
  for (const e of events) {
    const row = thumbRowOf(e);
    if (!row) continue;
    const day = utcDay(row.occurred_at);
    const list = days.get(day);
    if (list) list.push(row);
    else days.set(day, [row]);
  }
  const keys: string[] = [];
  for (const [day, rows] of days) {
    const key = archiveKeys.derivedMetrics(tenant, day, ingestId);
    await writeMetricRows(rootBlobs, tenant, key, rows);
    keys.push(key);
  }
  return keys;
}
