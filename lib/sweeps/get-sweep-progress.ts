import { NotFoundError } from '../errors.ts';
import { listAttemptRecords } from '../harness/attempt/read-attempt-records.ts';
import type { Ports } from '../ports/ports.ts';
import { forEachLimited } from '../shared/for-each-limited.ts';
import { shardPartRecord, sweepExecutionRecord } from './record-codecs.ts';
import { sweepBlobKeys, sweepKeys } from './record-keys.ts';
import { readShardSpec, shardAttemptRunIds } from './shard-spec.ts';
import type { ShardProgress, SweepProgress } from './sweep-progress-schema.ts';
import { findSweep } from './sweep-record.ts';
import type { ShardRef } from './workflow/sweep-steps.ts';

/** Shards read at once: a shard costs its spec and one query per array child. */
const CONCURRENCY = 8;

/**
 * Each shard of a sweep with its progress: from the plan (`sweeps/<id>/plan.json`), each shard's spec (tasks ×
 * attempts), the attempt records its children wrote so far, and its aggregated part (succeeded or failed). Read-only;
 * `Flywheel.NotFoundError` for a sweep never started. A sweep not planned yet answers `planned: false` and no shards.
 *
 * @example
 * const { shards } = await getSweepProgress(ports, 'checkpoint-ck-1-1a2b3c4d');
 * for (const s of shards) console.log(s.shardId, s.status, `${s.done}/${s.total}`);
 */
export async function getSweepProgress(ports: Pick<Ports, 'records' | 'blobs' | 'now'>, sweepId: string): Promise<SweepProgress> {
  const sweep = await findSweep(ports.records, sweepId);
  if (!sweep) {
    const key = sweepKeys.execution(sweepId);
    if (!sweepExecutionRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk))) throw new NotFoundError(`No sweep ${sweepId}`);
    return { sweepId, planned: false, shards: [] };
  }
  const planBytes = await ports.blobs.get(sweepBlobKeys.plan(sweepId));
  if (!planBytes) return { sweepId, planned: false, shards: [] };
  const plan = JSON.parse(new TextDecoder().decode(planBytes)) as { shards: ShardRef[] };
  const parts = new Map<string, ReturnType<typeof shardPartRecord.decode>>();
  let cursor: string | undefined;
  do {
    const page = await ports.records.query({ partition: sweepKeys.resultPartition(sweepId), sort: { beginsWith: 'SHARD#' }, limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const item of page.items) {
      const part = shardPartRecord.decode(item);
      parts.set(part.shardId, part);
    }
    cursor = page.cursor;
  } while (cursor);
  const now = ports.now();
  const shards: ShardProgress[] = new Array(plan.shards.length);
  await forEachLimited(
    plan.shards.map((ref, i) => ({ ref, i })),
    CONCURRENCY,
    async ({ ref, i }) => {
      const spec = await readShardSpec(ports.blobs, ref.shardKey);
      const attempts = (await Promise.all(shardAttemptRunIds(spec).map((runId) => listAttemptRecords(ports.records, runId)))).flat();
      const part = parts.get(ref.shardId);
      const starts = attempts.map((a) => a.startedAt).filter(Boolean).sort();
      const ends = attempts.map((a) => a.finishedAt).filter(Boolean).sort();
      const startedAt = starts[0];
      const finishedAt = part?.updatedAt;
      const end = finishedAt ?? (startedAt ? now.toISOString() : undefined);
      const total = spec.taskIds.length * spec.attempts;
      shards[i] = {
        shardId: ref.shardId,
        checkpoint: ref.checkpoint,
        suite: ref.suite,
        mode: ref.mode,
        status: part ? part.status : attempts.length > 0 ? 'running' : 'pending',
        // An aggregated shard that succeeded ran every attempt, whatever its children recorded under a retry.
        done: part?.status === 'succeeded' ? Math.max(attempts.length, total) : Math.min(attempts.length, total),
        total,
        tasks: spec.taskIds.length,
        ...(startedAt ? { startedAt } : {}),
        ...(finishedAt ? { finishedAt } : {}),
        ...(startedAt && end ? { elapsedSeconds: Math.max(0, (Date.parse(part ? (ends.at(-1) ?? end) : end) - Date.parse(startedAt)) / 1000) } : {}),
        ...(part?.error ? { error: part.reason ? `${part.error}: ${part.reason}` : part.error } : {}),
      };
    },
  );
  return { sweepId, planned: true, shards };
}
