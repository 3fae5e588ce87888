/**
 * The codecs of the notices' records (keys in `record-keys.ts`): a notice (one item per notice, listed by time and by
 * status), the index item that points a dedup key at its open notice, and a watched run's heartbeat.
 */
import { z } from 'zod';
import { defineRecordCodec } from '../../shared/record-codec.ts';
import { NoticeRecord } from './schemas.ts';
import { heartbeatKeys, noticeKeys } from './record-keys.ts';

/**
 * A notice as stored: the record plus `revision`, bumped by every write, so each writer (a repeat folding in, an
 * acknowledgement, a resolution, a delivery) writes over exactly the item it read (`unchanged` on `revision`).
 */
export const StoredNotice = NoticeRecord.extend({ revision: z.number().int().min(0) });
export type StoredNotice = z.infer<typeof StoredNotice>;

export const noticeRecord = defineRecordCodec({
  kind: 'notice',
  schema: StoredNotice,
  keys: (n) => ({
    ...noticeKeys.notice(n.noticeId),
    gsi1pk: noticeKeys.all,
    gsi1sk: n.noticeId,
    gsi2pk: noticeKeys.byStatus(n.status),
    gsi2sk: n.noticeId,
  }),
});

/** The open (or acknowledged) notice of a dedup key; a resolved notice's pointer is replaced by the next one. */
export const noticeIndexRecord = defineRecordCodec({
  kind: 'notice index',
  schema: z.object({ dedupKey: z.string(), noticeId: z.string(), claimedAt: z.iso.datetime() }),
  keys: (i) => noticeKeys.openByKey(i.dedupKey),
});

/** A run under watch: its newest heartbeat, and the stall notice raised about it, if any. */
export const HeartbeatWatch = z.object({
  runKind: z.string().min(1).max(64),
  runId: z.string().min(1).max(256),
  stage: z.string().min(1).max(128),
  startedAt: z.iso.datetime(),
  lastBeatAt: z.iso.datetime(),
  beats: z.number().int().min(1),
  progress: z.object({ done: z.number().min(0), total: z.number().min(0) }).optional(),
  message: z.string().max(1000).optional(),
  /** The stall notice raised while it was silent; resolved on the next heartbeat. */
  stallNoticeId: z.string().optional(),
});
export type HeartbeatWatch = z.infer<typeof HeartbeatWatch>;

export const heartbeatRecord = defineRecordCodec({
  kind: 'heartbeat',
  schema: HeartbeatWatch,
  keys: (w) => ({ ...heartbeatKeys.watch(w.runKind, w.runId), gsi1pk: heartbeatKeys.all, gsi1sk: heartbeatKeys.listSort(w.runKind, w.runId) }),
});
