import type { SweepSettings } from '../config/stages.ts';
import { ValidationError } from '../errors.ts';
import { forEachLimited } from '../feedback/for-each-limited.ts';
import { loadSuite, localSourceDir } from '../harness/eval/load-suite.ts';
import type { Task } from '../harness/task/task-schema.ts';
import { getCheckpoint } from '../registry/get-checkpoint.ts';
import { getSuite } from '../registry/get-suite.ts';
import { registryKeys, sweepBlobKeys } from '../registry/record-keys.ts';
import type { Checkpoint, Suite } from '../registry/schemas.ts';
import { SWEEP_SHARD_LIMIT } from './resolve-sweep-selection.ts';
import { shardPartKey } from './aggregate-cell.ts';
import { SHARD_SPEC_VERSION, type ShardSpec } from './shard-spec.ts';
import { getSweep, putSweep } from './sweep-record.ts';
import type { PlanShardsInput, ShardPlan, ShardRef, SweepStepPorts } from './workflow/sweep-steps.ts';

/** Batch array sizes run from 2 to 10,000. */
const MIN_ARRAY = 2;
const MAX_ARRAY = 10_000;

/**
 * Step `plan-shards`: cuts every checkpoint × suite × mode of the sweep into shards of at most
 * `settings.shardMaxTasks` tasks (contiguous runs of the suite's task list), writes each shard's spec as a blob
 * (`lib/sweeps/shard-spec.ts`, the rollout job's input) and the whole plan as `sweeps/<id>/plan.json`, and returns the
 * small `ShardRef`s the Map iterates over.
 *
 * Every task reaches the job as a blob of task JSON: a forged task's own blob (`taskKey` of its `TASK#<suite>#<id>`
 * record), a blob suite's `<prefix><taskId>.json`, or, for a folder suite and records holding only the task JSON, a
 * copy under `sweeps/<id>/tasks/` (a local task's repository path made absolute, so the job finds it from any folder).
 *
 * Idempotent: shard ids (`c<i>-s<j>-<mode>-<k>`, positions in the recorded selection) and spec bytes depend only on
 * the sweep record and the suite, so a replay rewrites the same blobs and answers the same plan, except that a
 * shard whose part an earlier run already aggregated (status succeeded) comes back `done`, so a resumed sweep
 * submits no job for it (the plan blob itself never carries `done`).
 *
 * @example
 * const plan = await planShards(ports, { sweepId: 'nightly-20261202' }, settings); // plan.shards[0].shardKey
 */
export async function planShards(ports: SweepStepPorts, input: PlanShardsInput, settings: SweepSettings): Promise<ShardPlan> {
  const sweep = await getSweep(ports.records, input.sweepId);
  const checkpoints = await Promise.all(sweep.checkpoints.map((id) => getCheckpoint(ports.records, id)));
  const suites: Suite[] = [];
  for (const ref of sweep.suites) {
    const suite = await getSuite(ports.records, ref.id);
    if (suite.version !== ref.version) {
      throw new ValidationError(`suite ${ref.id} moved from version ${ref.version} to ${suite.version} after sweep ${sweep.sweepId} was validated; start a new sweep`, [
        { path: 'suites', message: `${ref.id} is at version ${suite.version}` },
      ]);
    }
    suites.push(suite);
  }
  const taskKeys: Array<Map<string, string>> = [];
  for (const suite of suites) taskKeys.push(await taskBlobKeys(ports, sweep.sweepId, suite));

  const shards: ShardRef[] = [];
  const specs: Array<{ key: string; spec: ShardSpec }> = [];
  checkpoints.forEach((checkpoint, ci) => {
    suites.forEach((suite, si) => {
      // Retired tasks (a forged task that stopped certifying) have no key and take no part.
      const liveTaskIds = suite.taskIds.filter((id) => taskKeys[si]!.has(id));
      for (const mode of sweep.modes) {
        for (let k = 0, start = 0; start < liveTaskIds.length; k++, start += settings.shardMaxTasks) {
          const taskIds = liveTaskIds.slice(start, start + settings.shardMaxTasks);
          const shardId = `c${ci}-s${si}-${mode}-${k}`;
          const shardKey = sweepBlobKeys.shardSpec(sweep.sweepId, shardId);
          const arraySize = Math.min(MAX_ARRAY, Math.max(MIN_ARRAY, Math.ceil(taskIds.length / settings.tasksPerChild)));
          shards.push({ shardId, shardKey, checkpoint: checkpoint.id, suite: suite.id, mode, arraySize, gpus: checkpoint.serving.kind === 'vllm' ? checkpoint.serving.gpus : 1 });
          specs.push({
            key: shardKey,
            spec: {
              schemaVersion: SHARD_SPEC_VERSION,
              runId: registryKeys.shardRunId(sweep.sweepId, checkpoint.id, suite.id, mode, k),
              suite: suite.id,
              taskKeys: taskIds.map((id) => taskKeys[si]!.get(id)!),
              ...serve(checkpoint),
              checkpoint: checkpoint.id,
              mode,
              attempts: sweep.attemptsPerTask,
              shardCount: arraySize,
              outputPrefix: sweepBlobKeys.shardOutputPrefix(sweep.sweepId, shardId),
              sweepId: sweep.sweepId,
              shardId,
              shardIndex: k,
              taskIds,
              suiteVersion: suite.version,
              visibility: suite.visibility,
              checkpointModel: checkpoint.model,
              serving: checkpoint.serving,
              ...(checkpoint.artifactKey ? { artifactKey: checkpoint.artifactKey } : {}),
              arraySize,
              createdAt: sweep.validatedAt,
            },
          });
        }
      }
    });
  });
  if (shards.length > SWEEP_SHARD_LIMIT) {
    throw new ValidationError(`sweep ${sweep.sweepId} has ${shards.length} shards; at most ${SWEEP_SHARD_LIMIT}`, [{ path: 'suites', message: 'too many shards' }]);
  }
  await forEachLimited(specs, 16, ({ key, spec }) => ports.blobs.put(key, JSON.stringify(spec), { contentType: 'application/json' }));
  const planKey = sweepBlobKeys.plan(sweep.sweepId);
  await ports.blobs.put(planKey, JSON.stringify({ sweepId: sweep.sweepId, shards }), { contentType: 'application/json' });
  const answer = await markDone(ports, sweep.sweepId, shards);
  if (sweep.status === 'validated' || sweep.shardCount !== shards.length) {
    await putSweep(ports.records, { ...sweep, status: sweep.status === 'validated' ? 'planned' : sweep.status, plannedAt: sweep.plannedAt ?? ports.now().toISOString(), shardCount: shards.length });
  }
  return { sweepId: sweep.sweepId, planKey, shardCount: shards.length, shards: answer };
}

/** The shards, each `done` whose part an earlier run of this sweep aggregated (`SHARD#…` with status succeeded). */
async function markDone(ports: SweepStepPorts, sweepId: string, shards: ShardRef[]): Promise<ShardRef[]> {
  const out = [...shards];
  await forEachLimited(shards.map((shard, i) => ({ shard, i })), 16, async ({ shard, i }) => {
    const key = shardPartKey(sweepId, shard);
    const part = await ports.records.get(key.pk, key.sk);
    if (part?.status === 'succeeded') out[i] = { ...shard, done: true };
  });
  return out;
}

/** The shard plan's full list, from its blob. */
export async function readPlan(ports: Pick<SweepStepPorts, 'blobs'>, sweepId: string): Promise<ShardRef[]> {
  const bytes = await ports.blobs.get(sweepBlobKeys.plan(sweepId));
  if (!bytes) return [];
  return (JSON.parse(new TextDecoder().decode(bytes)) as { shards: ShardRef[] }).shards;
}

/**
 * `model` for an endpoint, or the `vllm` command the rollout job runs beside the harness with the port it listens on
 * (the job passes `port` to the command as `$FLYWHEEL_VLLM_PORT`).
 */
function serve(checkpoint: Checkpoint): Pick<ShardSpec, 'model' | 'vllm'> {
  const s = checkpoint.serving;
  if (s.kind === 'endpoint') return { model: s.model };
  const name = s.servedModelName ?? checkpoint.id;
  const quote = (a: string) => (/^[A-Za-z0-9._:/=@+-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`);
  return {
    vllm: {
      servedModelName: name,
      port: s.port,
      command: ['vllm', 'serve', '"$FLYWHEEL_CHECKPOINT_DIR"', '--port', '"$FLYWHEEL_VLLM_PORT"', '--served-model-name', quote(name), ...s.args.map(quote)].join(' '),
    },
  };
}

/** Task id → blob key of its task JSON, for every task of the suite. */
async function taskBlobKeys(ports: SweepStepPorts, sweepId: string, suite: Suite): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const source = suite.tasks;
  const copy = async (id: string, task: Task) => {
    const key = sweepBlobKeys.task(sweepId, suite.id, id);
    await ports.blobs.put(key, JSON.stringify(task), { contentType: 'application/json' });
    out.set(id, key);
  };
  if (source.kind === 'blobs') {
    for (const id of suite.taskIds) out.set(id, `${source.prefix}${id}.json`);
  } else if (source.kind === 'records') {
    const missing: string[] = [];
    await forEachLimited(suite.taskIds, 16, async (id) => {
      const key = registryKeys.task(suite.id, id, source.sk);
      const item = await ports.records.get(key.pk, key.sk);
      if (item?.status === 'retired') return;
      if (typeof item?.taskKey === 'string') out.set(id, item.taskKey);
      else if (item?.task && typeof item.task === 'object') await copy(id, item.task as Task);
      else missing.push(id);
    });
    if (missing.length > 0) {
      throw new ValidationError(`suite ${suite.id}: no task record (with taskKey or task) for ${missing.slice(0, 10).join(', ')}${missing.length > 10 ? ` and ${missing.length - 10} more` : ''}`, [
        { path: 'taskIds', message: `${missing.length} task(s) missing` },
      ]);
    }
  } else {
    const loaded = new Map((await loadSuite(source.path)).map((t) => [t.task.id, t]));
    for (const id of suite.taskIds) {
      const t = loaded.get(id);
      if (!t) throw new ValidationError(`suite ${suite.id}: task ${id} is not in ${source.path} any more`, [{ path: 'taskIds', message: `${id} missing` }]);
      const repo = t.task.repo.kind === 'local' ? { kind: 'local' as const, path: localSourceDir(t.task, t.file) } : t.task.repo;
      await copy(id, { ...t.task, repo });
    }
  }
  return out;
}
