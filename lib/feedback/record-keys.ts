/**
 * The record and blob key layout of feedback, in one place so writers and readers agree.
 *
 * | item | pk | sk | gsi1 (by model) | gsi2 (by day) |
 * | --- | --- | --- | --- | --- |
 * | event | `FEEDBACK#<eventId>` | `EVENT` | `MODEL#<model>` / `<receivedAt>#<eventId>` | `FEEDBACKDAY#<YYYY-MM-DD>` / `<receivedAt>#<eventId>` |
 * | current vote | `FBKEY#<feedbackKey>` | `CURRENT` | | |
 * | vote history | `FBKEY#<feedbackKey>` | `VOTE#<occurredAt>#<eventId>` | | |
 * | report | `REPORT#<reportId>` | `REPORT` | `REPORTMODEL#<model>` / `<receivedAt>#<reportId>` | `REPORTDAY#<YYYY-MM-DD>` / `<receivedAt>#<reportId>` |
 */
export const feedbackKeys = {
  event: (eventId: string) => ({ pk: `FEEDBACK#${eventId}`, sk: 'EVENT' }),
  byModel: (model: string) => `MODEL#${model}`,
  byDay: (day: string) => `FEEDBACKDAY#${day}`,
  /** Sort key of both indexes: newest first when queried descending. */
  listSort: (receivedAt: string, eventId: string) => `${receivedAt}#${eventId}`,
  current: (feedbackKey: string) => ({ pk: `FBKEY#${feedbackKey}`, sk: 'CURRENT' }),
  /** The feedbackKey a vote's partition (`FBKEY#<feedbackKey>`) names. */
  feedbackKeyOf: (pk: string) => pk.slice('FBKEY#'.length),
  voteSortPrefix: 'VOTE#',
  vote: (feedbackKey: string, order: string) => ({ pk: `FBKEY#${feedbackKey}`, sk: `VOTE#${order}` }),
  /** Total order of votes under one feedbackKey: occurredAt (UTC ISO, so lexicographic = chronological), then eventId. */
  voteOrder: (occurredAt: string, eventId: string) => `${occurredAt}#${eventId}`,
  report: (reportId: string) => ({ pk: `REPORT#${reportId}`, sk: 'REPORT' }),
  reportsByModel: (model: string) => `REPORTMODEL#${model}`,
  reportsByDay: (day: string) => `REPORTDAY#${day}`,
} as const;

export const blobKeys = {
  /**
   * Inline trajectories moved out of the event. The id is escaped (`/` → `%2F`, …): one path segment per id, so ids
   * never collide as paths (`a` → `a.json` and `a.json/x` → `a.json%2Fx.json`, not a file inside `a.json/`).
   */
  trajectory: (eventId: string) => `trajectories/feedback/${encodeURIComponent(eventId)}.json`,
  /** An ingest envelope too large for one queue message. */
  spooledEnvelope: (ingestId: string) => `spool/ingest/${ingestId}.json`,
  /** One JSON Lines object per processed message (one ingest request); a retry overwrites it. */
  rawArchive: (kind: 'feedback' | 'report', day: string, ingestId: string) =>
    `raw/${kind === 'feedback' ? 'feedback' : 'reports'}/dt=${day}/${ingestId}.jsonl`,
} as const;

/** `YYYY-MM-DD` of a UTC ISO timestamp. */
export function utcDay(iso: string): string {
  return iso.slice(0, 10);
}
