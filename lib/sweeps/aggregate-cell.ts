/**
 * The result rows of a sweep: one part per shard (`SHARD#…`, what that shard's attempts say) and one cell per
 * checkpoint × suite × mode (`CELL#…`), always recomputed from all its parts, never incremented. So aggregating a
 * shard twice, or two shards of one cell at once, can never double-count: the part is overwritten with the same
 * tallies, and the cell is rebuilt from whatever parts exist (`recomputeCells` after the Map makes it final).
 */
import { z } from 'zod';
import type { RecordsPort } from '../ports/records.ts';
import type { BlobsPort } from '../ports/blobs.ts';
import { cellRecord, shardPartRecord, TaskTallySchema, type CellRecord, type ShardPartRecord, type TaskTally } from './record-codecs.ts';
import { shardIndexOf, sweepBlobKeys, sweepKeys } from './record-keys.ts';
import { mergeJudgeSummaries } from '../harness/eval/criterion-scores.ts';
import type { HarnessMode } from '../harness/task/harness-mode.ts';
import { scoreTallies } from './score-interval.ts';
import type { SweepRecordBody } from './schemas.ts';
import type { ShardRef } from './workflow/sweep-steps.ts';

/** Per-task tallies above this size go to a blob (DynamoDB items are 400 KB). */
export const PER_TASK_INLINE_MAX_BYTES = 64 * 1024;

/** A cell's per-task tallies, inline or from their blob. */
export async function cellTallies(blobs: BlobsPort, cell: CellRecord): Promise<TaskTally[]> {
  if (cell.perTask) return cell.perTask;
  if (!cell.perTaskKey) return [];
  const bytes = await blobs.get(cell.perTaskKey);
  return bytes ? z.array(TaskTallySchema).parse(JSON.parse(new TextDecoder().decode(bytes))) : [];
}

/** `RESULT#<sweep>…` / `SHARD#…`: the record of a shard's part of its cell. */
export function shardPartKey(sweepId: string, shard: Pick<ShardRef, 'shardId' | 'checkpoint' | 'suite' | 'mode'>): { pk: string; sk: string } {
  return sweepKeys.shardPart(sweepId, shard.checkpoint, shard.suite, shard.mode, shardIndexOf(shard));
}

export async function listParts(records: RecordsPort, sweepId: string, checkpoint: string, suite: string, mode: HarnessMode): Promise<ShardPartRecord[]> {
  const out: ShardPartRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await records.query({
      partition: sweepKeys.resultPartition(sweepId),
      sort: { beginsWith: sweepKeys.shardPartPrefix(checkpoint, suite, mode) },
      limit: 1000,
      ...(cursor ? { cursor } : {}),
    });
    out.push(...page.items.map(shardPartRecord.decode));
    cursor = page.cursor;
  } while (cursor);
  return out;
}

/**
 * Rebuilds one cell row from its parts and overwrites it. The time-series index keys use the sweep's request time,
 * so rewriting the cell moves nothing in the series.
 */
export async function recomputeCell(
  ports: { records: RecordsPort; blobs: BlobsPort; now: () => Date },
  sweep: SweepRecordBody,
  cell: { checkpoint: string; suite: string; suiteVersion: number; mode: HarnessMode; shards: number; tasks: number },
): Promise<CellRecord> {
  const parts = await listParts(ports.records, sweep.sweepId, cell.checkpoint, cell.suite, cell.mode);
  const ok = parts.filter((p) => p.status === 'succeeded');
  const perTask = ok.flatMap((p) => p.perTask).sort((a, b) => a.taskId.localeCompare(b.taskId));
  const s = scoreTallies(perTask);
  const judge = mergeJudgeSummaries(ok.map((p) => p.judge));
  const at = sweep.requestedAt;
  const item: CellRecord = {
    kind: 'sweep-result',
    sweepId: sweep.sweepId,
    checkpoint: cell.checkpoint,
    suite: cell.suite,
    suiteVersion: cell.suiteVersion,
    mode: cell.mode,
    score: s.score,
    n: s.n,
    tasks: cell.tasks,
    attempts: s.attempts,
    passes: s.passes,
    ungraded: ok.reduce((a, p) => a + p.ungraded, 0),
    infrastructureErrors: ok.reduce((a, p) => a + p.infrastructureErrors, 0),
    ci: s.ci,
    shards: cell.shards,
    shardsAggregated: ok.length,
    shardsFailed: parts.length - ok.length,
    attemptsKeys: parts.map((p) => `EVAL#${p.runId}.shard-{0..${p.arraySize - 1}}`),
    at,
    updatedAt: ports.now().toISOString(),
    attemptsPerTask: sweep.attemptsPerTask,
    ...(judge ? { judge } : {}),
  };
  const tallies = JSON.stringify(perTask);
  if (Buffer.byteLength(tallies) <= PER_TASK_INLINE_MAX_BYTES) item.perTask = perTask;
  else {
    item.perTaskKey = sweepBlobKeys.cellTallies(sweep.sweepId, `${cell.checkpoint}#${cell.suite}#${cell.mode}`);
    await ports.blobs.put(item.perTaskKey, tallies, { contentType: 'application/json' });
  }
  await ports.records.put(cellRecord.encode(item));
  return item;
}
