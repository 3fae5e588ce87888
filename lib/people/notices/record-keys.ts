/**
 * The record key layout of notices and heartbeats, in one place so writers and readers agree.
 *
 * | item | pk | sk | gsi1 | gsi2 |
 * | --- | --- | --- | --- | --- |
 * | notice | `NOTICE#<noticeId>` | `NOTICE` | `NOTICES` / `<noticeId>` | `NOTICES#<status>` / `<noticeId>` |
 * | open notice of a dedup key | `NOTICEKEY#<dedupKey>` | `OPEN` | | |
 * | watched run (heartbeats) | `HEARTBEAT#<runKind>#<runId>` | `WATCH` | `WATCHES` / `<runKind>#<runId>` | |
 *
 * `noticeId` is time-sortable (`n-<createdAt ms, base36, 9 chars>-<8 hex of the dedup key's hash>`), so a query of
 * `NOTICES` (or one status) in descending order lists the newest first. A watched run leaves `WATCHES` when it
 * finishes (its item is deleted), so the stall check reads only the runs still going.
 */
export const noticeKeys = {
  notice: (noticeId: string) => ({ pk: `NOTICE#${noticeId}`, sk: 'NOTICE' }),
  all: 'NOTICES',
  byStatus: (status: string) => `NOTICES#${status}`,
  openByKey: (dedupKey: string) => ({ pk: `NOTICEKEY#${dedupKey}`, sk: 'OPEN' }),
} as const;

export const heartbeatKeys = {
  watch: (runKind: string, runId: string) => ({ pk: `HEARTBEAT#${runKind}#${runId}`, sk: 'WATCH' }),
  all: 'WATCHES',
  listSort: (runKind: string, runId: string) => `${runKind}#${runId}`,
} as const;
