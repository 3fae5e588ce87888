import { z } from 'zod';
import { groupTasksByImage } from '../rollout/environment-images.ts';
import type { SweepSettings } from '../config/stages.ts';
import { ConfigurationError, ValidationError } from '../errors.ts';
import { forEachLimited } from '../shared/for-each-limited.ts';
import { loadSuite, localSourceDir } from '../harness/eval/load-suite.ts';
import { isRemoteGitUrl } from '../harness/task/prepare-task-source.ts';
import type { Task } from '../harness/task/task-schema.ts';
import { getCheckpoint } from '../registry/get-checkpoint.ts';
import { getSuite } from '../registry/get-suite.ts';
import { taskRecord } from '../registry/record-codecs.ts';
import { registryKeys } from '../registry/record-keys.ts';
import type { Checkpoint, Suite } from '../registry/schemas.ts';
import { SWEEP_SHARD_LIMIT } from './resolve-sweep-selection.ts';
import { shardPartKey } from './aggregate-cell.ts';
import { shardPartRecord } from './record-codecs.ts';
import { sweepBlobKeys, sweepKeys } from './record-keys.ts';
import type { ShardSpec } from './shard-spec.ts';
import { SHARD_SPEC_SCHEMA_VERSION } from '../rollout/shard-spec.ts';
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
 * Environment images: one job runs in one image, so each suite's tasks are first grouped by the image they name
 * (`groupTasksByImage`: tasks naming none first, then each image in name order, suite order kept inside a group)
 * and each group is cut on its own. A shard of an image group carries the image in its spec (`environmentImage`)
 * and the job definition for it in its ShardRef (`jobDefinition`), got from `ports.imageDefinitions` (on AWS: the
 * rollout definition's clone for the image, registered here once, so the state machine only submits). A suite whose
 * tasks name no image is cut exactly as before, same shard ids.
 *
 * Every task reaches the job as a blob of task JSON: a forged task's own blob (`taskKey` of its `TASK#<suite>#<id>`
 * record), a blob suite's `<prefix><taskId>.json`, or, for a folder suite and records holding only the task JSON, a
 * copy under `sweeps/<id>/tasks/` (a local task's repository path made absolute, so the job finds it from any folder).
 *
 * The judge's and the simulated user's model specs (`settings.judgeModel`, `settings.userModel`) go into every spec, so
 * judge-graded and behavioural tasks are graded in sweeps.
 *
 * Idempotent: shard ids (`c<i>-s<j>-<mode>-<k>`, positions in the recorded selection; k counts on across a cell's
 * image groups) and spec bytes depend only on
 * the sweep record, the suite and the settings, so a replay rewrites the same blobs and answers the same plan, except that a
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
  const taskKeys: Array<Map<string, SuiteTaskKey>> = [];
  for (const suite of suites) taskKeys.push(await taskBlobKeys(ports, sweep.sweepId, suite));

  // One job runs in one image: each suite's live tasks are grouped by the environment image they name (tasks that
  // name none first, in suite order, so a suite without images is cut exactly as before), and each image gets the
  // job definition that runs the rollout command in it, registered once here.
  const groupsPerSuite = suites.map((suite, si) => {
    // Retired tasks (a forged task that stopped certifying) have no key and take no part.
    const live = suite.taskIds.flatMap((id) => {
      const t = taskKeys[si]!.get(id);
      return t ? [{ id, key: t.key, task: { environment: t.image ? { image: t.image } : undefined } }] : [];
    });
    return groupTasksByImage(live);
  });
  const images = [...new Set(groupsPerSuite.flatMap((groups) => groups.flatMap((g) => (g.image === undefined ? [] : [g.image]))))].sort();
  const definitions = await imageDefinitions(ports, images);

  const shards: ShardRef[] = [];
  const specs: Array<{ key: string; spec: ShardSpec }> = [];
  checkpoints.forEach((checkpoint, ci) => {
    suites.forEach((suite, si) => {
      for (const mode of sweep.modes) {
        // k runs on across the image groups of the cell: shard ids, run ids and part keys stay unique per cell.
        let k = 0;
        for (const group of groupsPerSuite[si]!) {
          for (let start = 0; start < group.tasks.length; k++, start += settings.shardMaxTasks) {
            const tasks = group.tasks.slice(start, start + settings.shardMaxTasks);
            const taskIds = tasks.map((t) => t.id);
            const shardId = `c${ci}-s${si}-${mode}-${k}`;
            const shardKey = sweepBlobKeys.shardSpec(sweep.sweepId, shardId);
            const arraySize = Math.min(MAX_ARRAY, Math.max(MIN_ARRAY, Math.ceil(taskIds.length / settings.tasksPerChild)));
            shards.push({
              shardId,
              shardKey,
              checkpoint: checkpoint.id,
              suite: suite.id,
              mode,
              arraySize,
              gpus: checkpoint.serving.kind === 'vllm' ? checkpoint.serving.gpus : 1,
              ...(group.image !== undefined ? { jobDefinition: definitions.get(group.image)! } : {}),
            });
            specs.push({
              key: shardKey,
              spec: {
                schemaVersion: SHARD_SPEC_SCHEMA_VERSION,
                runId: sweepKeys.shardRunId(sweep.sweepId, checkpoint.id, suite.id, mode, k),
                suite: suite.id,
                taskKeys: tasks.map((t) => t.key),
                ...serve(checkpoint),
                checkpoint: checkpoint.id,
                // The models of judge-graded and behavioural tasks, from the sweep settings (stage, FLYWHEEL_JUDGE_MODEL / FLYWHEEL_USER_MODEL).
                ...(settings.judgeModel ? { judgeModel: settings.judgeModel } : {}),
                ...(settings.userModel ? { userModel: settings.userModel } : {}),
                mode,
                attempts: sweep.attemptsPerTask,
                shardCount: arraySize,
                outputPrefix: sweepBlobKeys.shardOutputPrefix(sweep.sweepId, shardId),
                ...(group.image !== undefined ? { environmentImage: group.image } : {}),
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
      }
    });
  });
  if (shards.length > SWEEP_SHARD_LIMIT) {
    throw new ValidationError(`sweep ${sweep.sweepId} has ${shards.length} shards; at most ${SWEEP_SHARD_LIMIT}`, [{ path: 'suites', message: 'too many shards' }]);
  }
  const planBytes = Buffer.byteLength(JSON.stringify(shards));
  if (planBytes > MAX_PLAN_STATE_BYTES) {
    throw new ValidationError(
      `sweep ${sweep.sweepId}: its plan of ${shards.length} shards is ${planBytes} bytes, over the ${MAX_PLAN_STATE_BYTES} a Step Functions state can carry (shards in environment images carry their job definition); split it into several sweeps`,
      [{ path: 'suites', message: 'plan too large for one state' }],
    );
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

/**
 * The plan's shards must fit one state beside the rest of the execution's (256 KiB): a shard in an environment image
 * carries its job definition's ARN (≈ 100 bytes more), so a sweep of many per-instance images (SWE-bench) reaches
 * the limit before `SWEEP_SHARD_LIMIT`.
 */
export const MAX_PLAN_STATE_BYTES = 224 * 1024;

/** The job definition of each image, registered (or found) through the ports' `imageDefinitions`, 4 at a time. */
async function imageDefinitions(ports: SweepStepPorts, images: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (images.length === 0) return out;
  const resolver = ports.imageDefinitions;
  if (!resolver) {
    throw new ConfigurationError(
      `plan-shards: tasks name environment images (${images.slice(0, 3).join(', ')}${images.length > 3 ? `, and ${images.length - 3} more` : ''}) but no job definitions of images were given (SweepStepPorts.imageDefinitions; on AWS FLYWHEEL_ROLLOUT_JOB_DEFINITION)`,
    );
  }
  await forEachLimited(images, 4, async (image) => {
    out.set(image, await resolver.forImage(image));
  });
  return out;
}

/** The shards, each `done` whose part an earlier run of this sweep aggregated (`SHARD#…` with status succeeded). */
async function markDone(ports: SweepStepPorts, sweepId: string, shards: ShardRef[]): Promise<ShardRef[]> {
  const out = [...shards];
  await forEachLimited(shards.map((shard, i) => ({ shard, i })), 16, async ({ shard, i }) => {
    const key = shardPartKey(sweepId, shard);
    const part = shardPartRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
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

/** Where a task's JSON is for the rollout job, and the environment image it names. */
interface SuiteTaskKey {
  key: string;
  image?: string;
}

/**
 * The environment image a task blob names (blob suites and forged tasks: the task JSON is only in the blob). A blob
 * that is missing or not task JSON names none here: the job reading it fails that shard, as it always did.
 */
async function imageOfTaskBlob(ports: SweepStepPorts, key: string): Promise<string | undefined> {
  const bytes = await ports.blobs.get(key);
  if (!bytes) return undefined;
  try {
    return imageOfTaskJson(JSON.parse(new TextDecoder().decode(bytes)));
  } catch {
    return undefined;
  }
}

/** Task JSON that names an environment image. */
const NamesImage = z.object({ environment: z.object({ image: z.string() }) });

/** The environment image task JSON names; none for JSON that is not a task naming one. */
function imageOfTaskJson(json: unknown): string | undefined {
  const named = NamesImage.safeParse(json);
  return named.success ? named.data.environment.image : undefined;
}

/** Task id → blob key of its task JSON and its environment image, for every live task of the suite. */
async function taskBlobKeys(ports: SweepStepPorts, sweepId: string, suite: Suite): Promise<Map<string, SuiteTaskKey>> {
  const out = new Map<string, SuiteTaskKey>();
  const source = suite.tasks;
  const copy = async (id: string, task: Task | Record<string, unknown>) => {
    const key = sweepBlobKeys.task(sweepId, suite.id, id);
    await ports.blobs.put(key, JSON.stringify(task), { contentType: 'application/json' });
    const image = imageOfTaskJson(task);
    out.set(id, { key, ...(image ? { image } : {}) });
  };
  const stored = async (id: string, key: string) => {
    const image = await imageOfTaskBlob(ports, key);
    out.set(id, { key, ...(image ? { image } : {}) });
  };
  if (source.kind === 'blobs') {
    await forEachLimited(suite.taskIds, 16, (id) => stored(id, `${source.prefix}${id}.json`));
  } else if (source.kind === 'records') {
    const missing: string[] = [];
    await forEachLimited(suite.taskIds, 16, async (id) => {
      const key = registryKeys.task(suite.id, id, source.sk);
      const record = taskRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
      if (record?.status === 'retired') return;
      if (record?.taskKey !== undefined) await stored(id, record.taskKey);
      else if (record?.task) await copy(id, record.task);
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
      // The job may run in another folder: a repository on this machine goes by its absolute path, a bare one (or a
      // file:// URL) as the private checkout prepareTaskSource made of it; remote URLs and blobs the job fetches.
      const repo = t.task.repo;
      if (repo.kind === 'local') await copy(id, { ...t.task, repo: { kind: 'local', path: await localSourceDir(t.task, t.file) } });
      else if (repo.kind === 'git' && (!isRemoteGitUrl(repo.url) || repo.url.startsWith('file://'))) await copy(id, { ...t.task, repo: { ...repo, url: await localSourceDir(t.task, t.file) } });
      else await copy(id, t.task);
    }
  }
  return out;
}
