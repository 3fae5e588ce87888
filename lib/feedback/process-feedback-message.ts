import { scopePortsToTenant, tenantOf } from '../auth/tenant-ports.ts';
import type { Ports } from '../ports/ports.ts';
import type { RecordItem } from '../ports/records.ts';
import { forEachLimited } from './for-each-limited.ts';
import { readEnvelope } from './ingest-envelope.ts';
import { blobKeys, feedbackKeys, utcDay } from './record-keys.ts';
import type { FeedbackEvent, Report } from './schemas.ts';

export interface ProcessedMessage {
  ingestId: string;
  kind: 'feedback' | 'report';
  /** Ids stored by this delivery (including those a crashed earlier attempt of this same message wrote). */
  storedIds: string[];
  /** Items already stored by another message: counted, never stored twice. */
  duplicates: number;
  /** The raw archive written, when anything was stored. */
  archiveKey?: string;
}

/** Conditional puts in flight at once. */
const PUT_CONCURRENCY = 32;
/** Ids per `feedback.stored` event (ids ≤ 128 chars: well under EventBridge's 256 KiB entry). */
const IDS_PER_EVENT = 200;

/**
 * Stores one queue message (one ingest request): each item with a conditional put on its natural key, votes
 * under their feedbackKey (newest by occurredAt, then eventId, is current; earlier ones stay as history), the
 * newly stored raw items archived as one JSON Lines object, and `feedback.stored` / `report.stored` published.
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
  const ports = scopePortsToTenant(rootPorts, messageTenant(body));
  const envelope = await readEnvelope(ports.blobs, body);
  const { ingestId } = envelope;
  const out =
    envelope.kind === 'feedback'
      ? await storeFeedback(ports, ingestId, envelope.items)
      : await storeReports(ports, ingestId, envelope.items);
  const storedIds = out.stored.map((r) => (envelope.kind === 'feedback' ? (r.eventId as string) : (r.reportId as string)));
  let archiveKey: string | undefined;
  if (out.stored.length > 0) {
    archiveKey = blobKeys.rawArchive(envelope.kind, utcDay(envelope.receivedAt), ingestId);
    let lines = '';
    for (const r of out.stored) lines += JSON.stringify(archiveLine(r)) + '\n';
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
  return { ingestId, kind: envelope.kind, storedIds, duplicates: out.duplicates, ...(archiveKey ? { archiveKey } : {}) };
}

/** The tenant a queue message names (`default` when none); a malformed one throws (the message is dead-lettered). */
function messageTenant(body: string): string {
  // The tenant is spliced in first (`{"tenant":"acme",…`): read it without parsing a large body twice.
  const m = /^\{"tenant":("(?:[^"\\]|\\.)*")/.exec(body);
  if (!m) return tenantOf(undefined);
  return tenantOf({ tenant: JSON.parse(m[1]!) as unknown });
}

/** The archived line: the item as ingested, without the store's key attributes (Athena reads plain fields). */
function archiveLine(r: RecordItem): Record<string, unknown> {
  const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g1s, gsi2pk: _g2, gsi2sk: _g2s, supersededBy: _s, ...rest } = r;
  return rest;
}

/** Conditional create of each item; returns the ones this delivery owns, in input order. */
async function putOnce(ports: Ports, ingestId: string, items: RecordItem[]): Promise<{ stored: RecordItem[]; duplicates: number }> {
  const owned = new Array<boolean>(items.length).fill(false);
  let duplicates = 0;
  await forEachLimited(items, PUT_CONCURRENCY, async (item, i) => {
    const { written } = await ports.records.put(item, { condition: { kind: 'absent' } });
    if (written) {
      owned[i] = true;
      return;
    }
    const existing = await ports.records.get(item.pk, item.sk);
    if (existing?.ingestId === ingestId) owned[i] = true;
    else duplicates++;
  });
  return { stored: items.filter((_, i) => owned[i]), duplicates };
}

async function storeFeedback(ports: Ports, ingestId: string, events: FeedbackEvent[]) {
  const items: RecordItem[] = events.map((e) => {
    const sort = feedbackKeys.listSort(e.receivedAt, e.eventId);
    return {
      ...e,
      ...feedbackKeys.event(e.eventId),
      gsi1pk: feedbackKeys.byModel(e.model),
      gsi1sk: sort,
      gsi2pk: feedbackKeys.byDay(utcDay(e.receivedAt)),
      gsi2sk: sort,
      ingestId,
    };
  });
  const { stored, duplicates } = await putOnce(ports, ingestId, items);
  if (stored.length > 0) await recordVotes(ports, stored);
  return { stored, duplicates };
}

/**
 * Keeps every vote as history and moves `CURRENT` of each feedbackKey to the newest one. `CURRENT` is written with
 * absentOrOlder on its `order`, so concurrent or out-of-order deliveries converge on the newest vote; the events
 * that lose are marked `supersededBy` (informational: readers trust `CURRENT`).
 */
async function recordVotes(ports: Ports, stored: RecordItem[]): Promise<void> {
  const history: RecordItem[] = [];
  const groups = new Map<string, RecordItem[]>();
  for (const r of stored) {
    const key = r.feedbackKey as string;
    const order = feedbackKeys.voteOrder(r.occurredAt as string, r.eventId as string);
    history.push({
      ...feedbackKeys.vote(key, order),
      eventId: r.eventId,
      occurredAt: r.occurredAt,
      rating: r.rating,
      kind: r.kind,
      ...(r.outcome !== undefined ? { outcome: r.outcome } : {}),
      ingestId: r.ingestId,
    });
    const g = groups.get(key);
    if (g) g.push(r);
    else groups.set(key, [r]);
  }
  await ports.records.putMany(history);

  const marked: RecordItem[] = [];
  await forEachLimited([...groups], PUT_CONCURRENCY, async ([key, group]) => {
    let newest = group[0]!;
    let newestOrder = feedbackKeys.voteOrder(newest.occurredAt as string, newest.eventId as string);
    for (const r of group) {
      const o = feedbackKeys.voteOrder(r.occurredAt as string, r.eventId as string);
      if (o > newestOrder) {
        newest = r;
        newestOrder = o;
      }
    }
    const currentKey = feedbackKeys.current(key);
    const before = await ports.records.get(currentKey.pk, currentKey.sk);
    const { written } = await ports.records.put(
      { ...currentKey, eventId: newest.eventId, order: newestOrder, occurredAt: newest.occurredAt },
      { condition: { kind: 'absentOrOlder', field: 'order', value: newestOrder } },
    );
    let winner: string;
    if (written || before?.eventId === newest.eventId) {
      winner = newest.eventId as string;
      if (before && before.eventId !== winner) {
        const prev = await ports.records.get(feedbackKeys.event(before.eventId as string).pk, 'EVENT');
        if (prev && prev.supersededBy !== winner) marked.push({ ...prev, supersededBy: winner });
      }
    } else {
      const now = await ports.records.get(currentKey.pk, currentKey.sk);
      winner = (now?.eventId ?? before?.eventId) as string;
    }
    for (const r of group) if (r.eventId !== winner) marked.push({ ...r, supersededBy: winner });
  });
  if (marked.length > 0) await ports.records.putMany(marked);
}

async function storeReports(ports: Ports, ingestId: string, reports: Report[]) {
  const items: RecordItem[] = reports.map((r) => {
    const sort = feedbackKeys.listSort(r.receivedAt, r.reportId);
    return {
      ...r,
      ...feedbackKeys.report(r.reportId),
      gsi1pk: feedbackKeys.reportsByModel(r.model),
      gsi1sk: sort,
      gsi2pk: feedbackKeys.reportsByDay(utcDay(r.receivedAt)),
      gsi2sk: sort,
      ingestId,
    };
  });
  return putOnce(ports, ingestId, items);
}
