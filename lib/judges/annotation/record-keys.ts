/**
 * The record layout of annotation queues and gold sets, in one place so writers and readers agree.
 *
 * | item | pk | sk | gsi1 | gsi2 |
 * | --- | --- | --- | --- | --- |
 * | annotation item (subject, what to label, reason, the labels given) | `ANNOT#<id>` | `ITEM` | | |
 * | index row of an item (one per listing: all, by queue, by reason, by queue and reason) | `ANNOTIX#<listing>#<status>` | `<createdAt>#<id>` | | |
 * | gold set (name, the judge it calibrates, label ids, two-person fraction) | `GOLDSET#<name>` | `SET` | `GOLDSETS` / `<name>` | |
 *
 * Listings are partitions of their own, so `GET /v1/annotations?queue=&reason=&status=` is one query whatever the
 * filters (nothing is filtered in memory): an item has four index rows under its status, moved when it is done.
 * An item's id is a hash of its queue and its subject, so enqueueing the same subject twice is one item.
 */

export const ANNOTATION_STATUSES = ['pending', 'done'] as const;
export type AnnotationStatus = (typeof ANNOTATION_STATUSES)[number];

export const annotationKeys = {
  item: (id: string) => ({ pk: `ANNOT#${id}`, sk: 'ITEM' }),
  /** The partition of one listing (`all`, `q:<queue>`, `r:<reason>`, `qr:<queue>|<reason>`) under one status. */
  listing: (listing: string, status: AnnotationStatus) => `ANNOTIX#${listing}#${status}`,
  indexSortKey: (createdAt: string, id: string) => `${createdAt}#${id}`,
  goldSet: (name: string) => ({ pk: `GOLDSET#${name}`, sk: 'SET' }),
  goldSets: 'GOLDSETS',
} as const;

/** The listings an item appears in (each holds one index row of it under its status). */
export function listingsOf(queue: string, reason: string): string[] {
  return ['all', `q:${queue}`, `r:${reason}`, `qr:${queue}|${reason}`];
}

/** The listing a query names. */
export function listingOf(queue: string | undefined, reason: string | undefined): string {
  if (queue !== undefined && reason !== undefined) return `qr:${queue}|${reason}`;
  if (queue !== undefined) return `q:${queue}`;
  if (reason !== undefined) return `r:${reason}`;
  return 'all';
}

/** The queue of a gold set's items. */
export function goldSetQueue(name: string): string {
  return `gold:${name}`;
}
