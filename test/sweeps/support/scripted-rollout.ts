/**
 * What the rollout job (`batch-images/rollout/entrypoint.ts` → `lib/rollout/run-rollout-shard.ts`) leaves behind,
 * without sandboxes or a model: for each child i of the shard's array job, the tasks `shardTasks(tasks, i,
 * shardCount)` (each task blob read and validated, as the job does), one attempt record per task and attempt
 * n < attempts under the job's run id `<runId>.shard-<i>`, in the harness's own record shape
 * (`lib/harness/attempt/attempt-record.ts`). The outcome of each attempt comes from a script.
 */
import { shardTasks } from '../../../lib/harness/eval/shard-tasks.ts';
import { evalAttemptId, type AttemptRecord, type AttemptStatus } from '../../../lib/harness/attempt/attempt-record.ts';
import { attemptSortKey, evalPartition } from '../../../lib/harness/attempt/record-keys.ts';
import { parseTask, type Task } from '../../../lib/harness/task/task-schema.ts';
import type { BlobsPort } from '../../../lib/ports/blobs.ts';
import type { RecordsPort } from '../../../lib/ports/records.ts';
import { readShardSpec, type ShardSpec } from '../../../lib/sweeps/shard-spec.ts';
import type { HarnessMode } from '../../../lib/harness/task/harness-mode.ts';

export type AttemptScript = (a: { checkpoint: string; suite: string; mode: HarnessMode; taskId: string; n: number }) => AttemptStatus;

/** The attempt records one child of a shard writes. */
export async function scriptedChildAttempts(blobs: BlobsPort, spec: ShardSpec, child: number, script: AttemptScript): Promise<AttemptRecord[]> {
  const runId = `${spec.runId}.shard-${child}`;
  const out: AttemptRecord[] = [];
  // As the job does: by task id (taskIds are aligned with taskKeys), sorted, dealt round-robin.
  const keyed = spec.taskIds.map((id, i) => ({ id, key: spec.taskKeys[i]! }));
  for (const { key } of shardTasks(keyed, child, spec.shardCount)) {
    const bytes = await blobs.get(key);
    if (!bytes) throw new Error(`task blob ${key} is missing`);
    const task = parseTask(JSON.parse(new TextDecoder().decode(bytes)), key);
    for (let n = 0; n < spec.attempts; n++) {
      const status = script({ checkpoint: spec.checkpoint, suite: spec.suite, mode: spec.mode, taskId: task.id, n });
      const usage = { promptTokens: 100, completionTokens: 10, cachedTokens: 0 };
      out.push({
        pk: evalPartition(runId),
        sk: attemptSortKey(task.id, spec.mode, n),
        kind: 'eval-attempt',
        runId,
        attemptId: evalAttemptId(runId, task.id, spec.mode, n),
        taskId: task.id,
        suite: spec.suite,
        mode: spec.mode,
        n,
        status,
        usage,
        usageAllTries: usage,
        turns: 3,
        durationMs: 0,
        model: `scripted:${spec.checkpoint}`,
        tries: 1,
        history: [],
        startedAt: spec.createdAt,
        finishedAt: spec.createdAt,
      });
    }
  }
  return out;
}

export async function runScriptedShard(ports: { records: RecordsPort; blobs: BlobsPort }, shardKey: string, script: AttemptScript): Promise<ShardSpec> {
  const spec = await readShardSpec(ports.blobs, shardKey);
  for (let child = 0; child < spec.shardCount; child++) await ports.records.putMany(await scriptedChildAttempts(ports.blobs, spec, child, script));
  return spec;
}

/** A deterministic pass pattern: task t (its trailing number) passes attempt n when (t + n) mod 10 < rate × 10. */
export function rateScript(rate: (checkpoint: string, suite: string, mode: HarnessMode) => number): AttemptScript {
  return ({ checkpoint, suite, mode, taskId, n }) => {
    const t = Number(/\d+$/.exec(taskId)?.[0] ?? 0);
    return (t + n) % 10 < Math.round(rate(checkpoint, suite, mode) * 10) ? 'passed' : 'failed';
  };
}

/** A valid task of the harness's format (what the forge or an import stores). */
export function sampleTask(suite: string, id: string): Task {
  return parseTask({ schemaVersion: 1, id, suite, split: 'held-out', visibility: 'private', repo: { kind: 'git', url: 'https://example.invalid/r.git', commit: 'abcdef1' }, instruction: `fix ${id}`, testCommand: 'true', failToPass: ['t'] });
}
