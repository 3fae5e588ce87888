/**
 * Heartbeats: a job or workflow step says "still going" (`recordHeartbeat`), so a run that stops making progress is
 * noticed (`check-stalled-runs.ts`) without anyone watching it. The first heartbeat of a run starts its watch; a
 * `finished` heartbeat ends it. A heartbeat after a stall resolves the stall notice ("heartbeats resumed").
 */
import { z } from 'zod';
import { ConflictError } from '../../errors.ts';
import type { RecordsPort } from '../../ports/records.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { resolveNotice } from '../notices/notice-store.ts';
import { heartbeatRecord, type HeartbeatWatch } from '../notices/record-codecs.ts';
import { heartbeatKeys } from '../notices/record-keys.ts';

/** The kinds of watched run; each has its stage's stall window (`notices.stallWindowsMinutes`). */
export const RUN_KINDS = ['sweep', 'training', 'derivation', 'job'] as const;
export type RunKind = (typeof RUN_KINDS)[number];

export const HeartbeatInput = z.object({
  runKind: z.string().min(1).max(64),
  runId: z.string().min(1).max(256),
  /** The step or phase it is in, e.g. `shard c0-s1-strict-0` or `train`. */
  stage: z.string().min(1).max(128),
  progress: z.object({ done: z.number().min(0), total: z.number().min(0) }).optional(),
  message: z.string().max(1000).optional(),
  /** The run is over (succeeded, failed or stopped): its watch ends. */
  finished: z.boolean().optional(),
});
export type HeartbeatInput = z.input<typeof HeartbeatInput>;

export interface HeartbeatResult {
  /** The watch as written; undefined once finished. */
  watch?: HeartbeatWatch;
  /** The stall notice this heartbeat resolved, if the run had been reported stalled. */
  resolvedStall?: string;
}

/**
 * @example
 * await recordHeartbeat(ports.records, { runKind: 'sweep', runId: 'sw-1', stage: 'aggregate-shard', progress: { done: 3, total: 12 } });
 * await recordHeartbeat(ports.records, { runKind: 'sweep', runId: 'sw-1', stage: 'notify', finished: true });
 */
export async function recordHeartbeat(records: RecordsPort, input: HeartbeatInput, now: Date = new Date()): Promise<HeartbeatResult> {
  const beat = parseInput(HeartbeatInput, input, 'heartbeat');
  const key = heartbeatKeys.watch(beat.runKind, beat.runId);
  const at = now.toISOString();
  const before = heartbeatRecord.decodeIfPresent(await records.get(key.pk, key.sk));
  let resolvedStall: string | undefined;
  if (before?.stallNoticeId) {
    resolvedStall = before.stallNoticeId;
    const outcome = beat.finished ? `The run finished (${beat.stage}).` : `Heartbeats resumed (${beat.stage}${beat.progress ? `, ${beat.progress.done}/${beat.progress.total}` : ''}).`;
    await resolveNotice(records, before.stallNoticeId, { by: 'heartbeat', outcome }, now).catch((e: unknown) => {
      // Resolved already (a person answered it): nothing left to clear.
      if (!(e instanceof ConflictError)) throw e;
    });
  }
  if (beat.finished) {
    await records.delete(key.pk, key.sk);
    return { ...(resolvedStall ? { resolvedStall } : {}) };
  }
  const watch: HeartbeatWatch = {
    runKind: beat.runKind,
    runId: beat.runId,
    stage: beat.stage,
    startedAt: before?.startedAt ?? at,
    lastBeatAt: before && before.lastBeatAt > at ? before.lastBeatAt : at,
    beats: (before?.beats ?? 0) + 1,
    ...(beat.progress ? { progress: beat.progress } : before?.progress ? { progress: before.progress } : {}),
    ...(beat.message ? { message: beat.message } : {}),
  };
  await records.put(heartbeatRecord.encode(watch));
  return { watch, ...(resolvedStall ? { resolvedStall } : {}) };
}

/**
 * A heartbeat that never fails its caller: a step's work matters more than its watch (the failure is logged).
 *
 * @example
 * await beatQuietly(ports.records, { runKind: 'training', runId, stage: 'train' }, ports.now());
 */
export async function beatQuietly(records: RecordsPort, input: HeartbeatInput, now: Date = new Date()): Promise<void> {
  try {
    await recordHeartbeat(records, input, now);
  } catch (error) {
    process.stderr.write(`${JSON.stringify({ level: 'WARN', message: 'heartbeat not recorded', runKind: input.runKind, runId: input.runId, error: (error as Error).message })}\n`);
  }
}
