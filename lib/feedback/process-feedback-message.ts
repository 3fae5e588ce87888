import { scopePortsToTenant, tenantOf } from '../auth/tenant-ports.ts';
import { archiveFeedbackThumbs } from '../experiments/ingest/archive-feedback-thumbs.ts';
import { storeOnlineEvents } from '../experiments/ingest/store-online-events.ts';
import type { Ports } from '../ports/ports.ts';
import type { RecordItem } from '../ports/records.ts';
import { forEachLimited } from '../shared/for-each-limited.ts';
import { putOnce } from '../shared/put-once.ts';
import { readEnvelope, type IngestKind } from './ingest-envelope.ts';
import { currentVoteRecord, feedbackEventRecord, reportRecord, voteRecord, type StoredFeedbackEvent, type StoredReport } from './record-codecs.ts';
import { blobKeys, feedbackKeys, utcDay } from './record-keys.ts';
import type { FeedbackEvent, Report } from './schemas.ts';

export interface ProcessedMessage {
  ingestId: string;
  kind: IngestKind;
  /** Ids stored by this delivery (including those a crashed earlier attempt of this same message wrote). */
  storedIds: string[];
  /** Items already stored by another message: counted, never stored twice. */
  duplicates: number;
  /** The raw archive written, when anything was stored (feedback and reports). */
  archiveKey?: string;
  /**
   * Metric and exposure messages: the archive objects written (one per day of `occurredAt`); feedback: the derived
   * `feedback.thumb` rows' objects.
   */
  archiveKeys?: string[];
}

/** Conditional puts in flight at once. */
const PUT_CONCURRENCY = 32;
/** Ids per `feedback.stored` event (ids ≤ 128 chars: well under EventBridge's 256 KiB entry). */
const IDS_PER_EVENT = 200;

/**
 * Stores one queue message (one ingest request): each item with a conditional put on its natural key, votes
 * under their feedbackKey (newest by occurredAt, then eventId, is current; earlier ones stay as history), the
 * newly stored raw items archived as one JSON Lines object, and `feedback.stored` / `report.stored` published. A rated
 * feedback event also becomes a `feedback.thumb` row of the experiments' metric archive; `metric` and `exposure`
 * messages go to `storeOnlineEvents` (seen-markers, then rows under `raw/metrics|exposures/tenant=<t>/dt=<day>/`).
 *
 * Every step is idempotent, so a redelivery after a crash finishes the work: an item whose stored copy carries
 * this message's ingestId was written by our own earlier attempt and counts as stored by this delivery.
 *
 * @example
 * const { storedIds, duplicates } = await processFeedbackMessage(ports, message.body); // the message names its tenant
 */
export async function processFeedbackMessage(rootPorts: Ports, body: string): Promise<ProcessedMessage> {
  // The message carries the tenant of the key that posted it (lib/auth/tenant-ports.ts): everything below reads and
  // writes that tenant's records and blobs, and the events it publishes name it.
  const tenant = messageTenant(body);
  const ports = scopePortsToTenant(rootPorts, tenant);
  const envelope = await readEnvelope(ports.blobs, body);
  const { ingestId } = envelope;
  if (envelope.kind === 'metric' || envelope.kind === 'exposure') {
    // Online metrics and exposures: seen-markers in the tenant's records, rows in the tenant's archive partition.
    const online = await storeOnlineEvents({ records: ports.records, rootBlobs: rootPorts.blobs, metrics: ports.metrics }, tenant, envelope);
    return { ingestId, kind: envelope.kind, storedIds: online.storedIds, duplicates: online.duplicates, ...(online.archiveKeys.length > 0 ? { archiveKeys: online.archiveKeys } : {}) };
  }
  const out =
    envelope.kind === 'feedback'
      ? await storeFeedback(ports, ingestId, envelope.items)
      : await storeReports(ports, ingestId, envelope.items);
  const storedIds = out.ids;
  let archiveKey: string | undefined;
  let derivedKeys: string[] = [];
  if (storedIds.length > 0) {
    // Thumbs as online metric rows, before the event that tells the world they are stored.
    if (out.rated) derivedKeys = await archiveFeedbackThumbs(rootPorts.blobs, tenant, ingestId, out.rated);
    archiveKey = blobKeys.rawArchive(envelope.kind, utcDay(envelope.receivedAt), ingestId);
    let lines = '';
    for (const line of out.archived) lines += JSON.stringify(line) + '\n';
    await ports.blobs.put(archiveKey, lines, { contentType: 'application/x-ndjson' });
    const type = envelope.kind === 'feedback' ? 'feedback.stored' : 'report.stored';
    const idField = envelope.kind === 'feedback' ? 'eventIds' : 'reportIds';
    const events = [];
    for (let i = 0; i < storedIds.length; i += IDS_PER_EVENT) {
      events.push({
        type,
        id: `${ingestId}:${i / IDS_PER_EVENT}`,
        detail: { ingestId, [idField]: storedIds.slice(i, i + IDS_PER_EVENT), archiveKey },
      });
    }
    await ports.events.publish(events);
  }
  if (envelope.kind === 'feedback') {
    ports.metrics?.count('EventsStored', storedIds.length);
    ports.metrics?.count('EventsDuplicate', out.duplicates);
  } else {
    ports.metrics?.count('ReportsStored', storedIds.length);
    ports.metrics?.count('ReportsDuplicate', out.duplicates);
  }
  return { ingestId, kind: envelope.kind, storedIds, duplicates: out.duplicates, ...(archiveKey ? { archiveKey } : {}), ...(derivedKeys.length > 0 ? { archiveKeys: derivedKeys } : {}) };
}

/** The tenant a queue message names (`default` when none); a malformed one throws (the message is dead-lettered). */
function messageTenant(body: string): string {
  // The tenant is spliced in first (`{"tenant":"acme",…`): read it without parsing a large body twice.
  const m = /^\{"tenant":("(?:[^"\\]|\\.)*")/.exec(body);
  if (!m) return tenantOf(undefined);
  const tenant: unknown = JSON.parse(m[1]!);
  return tenantOf({ tenant });
}

/** What one message stored: the ids, their archive lines, and the items another message had stored already. */
interface StoredItems {
  ids: string[];
  archived: Array<Record<string, unknown>>;
  duplicates: number;
  /** Feedback: the stored events, whose ratings become `feedback.thumb` rows. */
  rated?: StoredFeedbackEvent[];
}

/** The archived line: the item as ingested, without the vote bookkeeping (Athena reads plain fields). */
function archiveLine<T extends { supersededBy?: string }>(value: T): Omit<T, 'supersededBy'> {
  const { supersededBy: _s, ...rest } = value;
  return rest;
}

async function storeFeedback(ports: Ports, ingestId: string, events: FeedbackEvent[]): Promise<StoredItems> {
  const values: StoredFeedbackEvent[] = events.map((e) => ({ ...e, ingestId }));
  const { stored, duplicates } = await putOnce(ports.records, ingestId, feedbackEventRecord, values);
  if (stored.length > 0) await recordVotes(ports, stored);
  return { ids: stored.map((e) => e.eventId), archived: stored.map(archiveLine), duplicates, rated: stored };
}

/**
 * Keeps every vote as history and moves `CURRENT` of each feedbackKey to the newest one. `CURRENT` is written with
 * absentOrOlder on its `order`, so concurrent or out-of-order deliveries converge on the newest vote; the events
 * that lose are marked `supersededBy` (informational: readers trust `CURRENT`).
 */
async function recordVotes(ports: Ports, stored: StoredFeedbackEvent[]): Promise<void> {
  const history: RecordItem[] = [];
  const groups = new Map<string, StoredFeedbackEvent[]>();
  for (const e of stored) {
    history.push(
      voteRecord.encode({
        feedbackKey: e.feedbackKey,
        eventId: e.eventId,
        occurredAt: e.occurredAt,
        rating: e.rating,
        kind: e.kind,
        ...(e.outcome !== undefined ? { outcome: e.outcome } : {}),
        ingestId: e.ingestId,
      }),
    );
    const g = groups.get(e.feedbackKey);
    if (g) g.push(e);
    else groups.set(e.feedbackKey, [e]);
  }
  await ports.records.putMany(history);

  const marked: StoredFeedbackEvent[] = [];
  await forEachLimited([...groups], PUT_CONCURRENCY, async ([key, group]) => {
    let newest = group[0]!;
    let newestOrder = feedbackKeys.voteOrder(newest.occurredAt, newest.eventId);
    for (const e of group) {
      const o = feedbackKeys.voteOrder(e.occurredAt, e.eventId);
      if (o > newestOrder) {
        newest = e;
        newestOrder = o;
      }
    }
    const currentKey = feedbackKeys.current(key);
    const before = currentVoteRecord.decodeIfPresent(await ports.records.get(currentKey.pk, currentKey.sk));
    const { written } = await ports.records.put(
      currentVoteRecord.encode({ feedbackKey: key, eventId: newest.eventId, order: newestOrder, occurredAt: newest.occurredAt }),
      { condition: { kind: 'absentOrOlder', field: 'order', value: newestOrder } },
    );
    let winner: string;
    if (written || before?.eventId === newest.eventId) {
      winner = newest.eventId;
      if (before && before.eventId !== winner) {
        const prevKey = feedbackKeys.event(before.eventId);
        const prev = feedbackEventRecord.decodeIfPresent(await ports.records.get(prevKey.pk, prevKey.sk));
        if (prev && prev.supersededBy !== winner) marked.push({ ...prev, supersededBy: winner });
      }
    } else {
      const now = currentVoteRecord.decodeIfPresent(await ports.records.get(currentKey.pk, currentKey.sk));
      // A newer vote holds CURRENT (the put lost to it); were it deleted meanwhile, ours is the newest known.
      winner = now?.eventId ?? before?.eventId ?? newest.eventId;
    }
    for (const e of group) if (e.eventId !== winner) marked.push({ ...e, supersededBy: winner });
  });
  if (marked.length > 0) await ports.records.putMany(marked.map((e) => feedbackEventRecord.encode(e)));
}

async function storeReports(ports: Ports, ingestId: string, reports: Report[]): Promise<StoredItems> {
  const values: StoredReport[] = reports.map((r) => ({ ...r, ingestId }));
  const { stored, duplicates } = await putOnce(ports.records, ingestId, reportRecord, values);
  return { ids: stored.map((r) => r.reportId), archived: stored, duplicates };
}
