import type { AttemptRecord } from '../harness/attempt/attempt-record.ts';
import { listAttemptRecords } from '../harness/attempt/read-attempt-records.ts';
import { judgeSummary } from '../harness/eval/criterion-scores.ts';
import { listParts, recomputeCell, shardPartKey } from './aggregate-cell.ts';
import { shardPartRecord, type ShardPartRecord, type TaskTally } from './record-codecs.ts';
import { shardIndexOf, sweepKeys } from './record-keys.ts';
import { readPlan } from './plan-shards.ts';
import { readShardSpec, shardAttemptRunIds, type ShardSpec } from './shard-spec.ts';
import { getSweep } from './sweep-record.ts';
import type { AggregateShardInput, RecordShardFailureInput, ShardOutcome, ShardRef, SweepStepPorts } from './workflow/sweep-steps.ts';

/** `RESULT#<sweep>/SHARD#…`: where a shard's part of the result is (the `resultKey` of its outcome). */
function partRef(sweepId: string, shard: ShardRef): { pk: string; sk: string; ref: string } {
  const key = shardPartKey(sweepId, shard);
  return { ...key, ref: `${key.pk}/${key.sk}` };
}

/**
 * Step `aggregate-shard`: reads the attempts the shard's array job wrote (`EVAL#<runId>.shard-<i>` for each child i,
 * the harness's attempt records, only this shard's tasks and attempts n < attempts), writes the shard's part of the result with
 * per-task tallies, and rebuilds the cell (checkpoint × suite × mode) from all its parts.
 *
 * Idempotent: the part is an overwrite computed from the attempt records alone, and the cell is recomputed, never
 * incremented, so running it twice (a retry, a resumed sweep) gives the same rows and counts nothing twice.
 *
 * @example
 * const outcome = await aggregateShard(ports, { sweepId, shard, job: { jobId: 'j-1', status: 'SUCCEEDED' } });
 */
export async function aggregateShard(ports: SweepStepPorts, input: AggregateShardInput): Promise<ShardOutcome> {
  const { sweepId, shard } = input;
  const spec = await readShardSpec(ports.blobs, shard.shardKey);
  const tally = await tallyAttempts(ports, spec);
  const key = partRef(sweepId, shard);
  const part: ShardPartRecord = {
    kind: 'sweep-shard-result',
    sweepId,
    shardId: shard.shardId,
    shardIndex: spec.shardIndex,
    checkpoint: shard.checkpoint,
    suite: shard.suite,
    mode: shard.mode,
    status: 'succeeded',
    runId: spec.runId,
    arraySize: spec.arraySize,
    ...tally,
    jobId: input.job.jobId,
    updatedAt: ports.now().toISOString(),
  };
  await ports.records.put(shardPartRecord.encode(part));
  await rebuildCellOf(ports, sweepId, shard);
  return { shardId: shard.shardId, status: 'succeeded', resultKey: key.ref };
}

/**
 * Step `record-shard-failure`: the shard's Batch job (or its aggregation) failed and the Map iteration caught it.
 * Records the failure as the shard's part, so the report names it and the cell counts it, unless the shard already
 * succeeded in an earlier run of this sweep id (a resumed sweep whose re-run failed keeps the good result).
 */
export async function recordShardFailure(ports: SweepStepPorts, input: RecordShardFailureInput): Promise<ShardOutcome> {
  const { sweepId, shard } = input;
  const key = partRef(sweepId, shard);
  const existing = shardPartRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
  if (existing?.status === 'succeeded') return { shardId: shard.shardId, status: 'succeeded', resultKey: key.ref };
  const part: ShardPartRecord = {
    kind: 'sweep-shard-result',
    sweepId,
    shardId: shard.shardId,
    shardIndex: shardIndexOf(shard),
    checkpoint: shard.checkpoint,
    suite: shard.suite,
    mode: shard.mode,
    status: 'failed',
    runId: sweepKeys.shardRunId(sweepId, shard.checkpoint, shard.suite, shard.mode, shardIndexOf(shard)),
    arraySize: shard.arraySize,
    perTask: [],
    ungraded: 0,
    infrastructureErrors: 0,
    error: input.error.Error,
    ...(failureReason(input.error.Cause) ? { reason: failureReason(input.error.Cause) } : {}),
    // Batch puts the whole job description in Cause: keep the record small.
    ...(input.error.Cause ? { cause: input.error.Cause.slice(0, 2000) } : {}),
    updatedAt: ports.now().toISOString(),
  };
  await ports.records.put(shardPartRecord.encode(part));
  await rebuildCellOf(ports, sweepId, shard);
  return { shardId: shard.shardId, status: 'failed', error: input.error.Error };
}

/**
 * A person-readable reason from a Step Functions Cause: Batch's `StatusReason` (e.g. `Essential container in task
 * exited`, a RUNNABLE time-limit cancel) or a Lambda's `errorMessage`, else the Cause's start.
 */
export function failureReason(cause: string | undefined): string | undefined {
  if (!cause) return undefined;
  try {
    const c = JSON.parse(cause) as { StatusReason?: unknown; errorMessage?: unknown; Attempts?: Array<{ StatusReason?: unknown }> };
    const reason = c.StatusReason ?? c.Attempts?.at(-1)?.StatusReason ?? c.errorMessage;
    if (typeof reason === 'string' && reason) return reason.slice(0, 300);
  } catch {
    // not JSON: the text itself
  }
  return cause.slice(0, 300);
}

async function tallyAttempts(ports: SweepStepPorts, spec: ShardSpec): Promise<Pick<ShardPartRecord, 'perTask' | 'ungraded' | 'infrastructureErrors' | 'judge'>> {
  const wanted = new Set(spec.taskIds);
  const byTask = new Map<string, TaskTally>(spec.taskIds.map((id) => [id, { taskId: id, scored: 0, passed: 0 }]));
  const seen = new Set<string>();
  const counted: AttemptRecord[] = [];
  let ungraded = 0;
  let infrastructureErrors = 0;
  for (const runId of shardAttemptRunIds(spec)) {
    for (const r of await listAttemptRecords(ports.records, runId)) {
      // One attempt counts once, whichever child wrote it (a task belongs to exactly one child).
      const id = `${r.taskId}#${r.n}`;
      if (!wanted.has(r.taskId) || r.mode !== spec.mode || r.n >= spec.attempts || seen.has(id)) continue;
      seen.add(id);
      counted.push(r);
      const t = byTask.get(r.taskId)!;
      if (r.status === 'passed') {
        t.scored++;
        t.passed++;
      } else if (r.status === 'failed') t.scored++;
      else if (r.status === 'ungraded') ungraded++;
      else infrastructureErrors++;
    }
  }
  // Judge-graded attempts (passed or failed: a judgement on the grade) add their rubric scores per criterion.
  const judge = judgeSummary(counted.filter((r) => r.status === 'passed' || r.status === 'failed'));
  return { perTask: [...byTask.values()], ungraded, infrastructureErrors, ...(judge ? { judge } : {}) };
}

async function rebuildCellOf(ports: SweepStepPorts, sweepId: string, shard: ShardRef): Promise<void> {
  const sweep = await getSweep(ports.records, sweepId);
  const plan = await readPlan(ports, sweepId);
  const suiteRef = sweep.suites.find((s) => s.id === shard.suite);
  const cellShards = plan.filter((s) => s.checkpoint === shard.checkpoint && s.suite === shard.suite && s.mode === shard.mode);
  const tasks = await countPlannedTasks(ports, cellShards);
  await recomputeCell(ports, sweep, {
    checkpoint: shard.checkpoint,
    suite: shard.suite,
    suiteVersion: suiteRef?.version ?? 1,
    mode: shard.mode,
    shards: Math.max(1, cellShards.length),
    tasks,
  });
}

/** Tasks planned in a cell: from the specs of its shards. */
async function countPlannedTasks(ports: SweepStepPorts, shards: ShardRef[]): Promise<number> {
  let n = 0;
  for (const s of shards) n += (await readShardSpec(ports.blobs, s.shardKey)).taskIds.length;
  return n;
}

/** Every cell of a sweep rebuilt from its parts (after the Map: concurrent shard aggregations may have raced). */
export async function recomputeCells(ports: SweepStepPorts, sweepId: string): Promise<void> {
  const sweep = await getSweep(ports.records, sweepId);
  const plan = await readPlan(ports, sweepId);
  const cells = new Map<string, ShardRef[]>();
  for (const s of plan) {
    const k = `${s.checkpoint}#${s.suite}#${s.mode}`;
    cells.set(k, [...(cells.get(k) ?? []), s]);
  }
  for (const shards of cells.values()) {
    const first = shards[0]!;
    const parts = await listParts(ports.records, sweepId, first.checkpoint, first.suite, first.mode);
    if (parts.length === 0) continue;
    await recomputeCell(ports, sweep, {
      checkpoint: first.checkpoint,
      suite: first.suite,
      suiteVersion: sweep.suites.find((s) => s.id === first.suite)?.version ?? 1,
      mode: first.mode,
      shards: shards.length,
      tasks: await countPlannedTasks(ports, shards),
    });
  }
}
