/**
 * Runs one shard of an eval: the shard's slice of the spec's tasks (`shardTasks` by array index: sorted by task id, dealt round-robin), every attempt
 * through the harness (`runEval`, so a retried job resumes where the last one stopped), then writes the shard's
 * result as a blob (`<outputPrefix>/shard-<index>.json`, the full results) and a record (`ROLLOUT#<runId>`,
 * `SHARD#<index>`, the summary and the blob key) for the sweep to aggregate.
 *
 * The exit code separates the model failing tasks (0: scored, whatever the score) from the infrastructure failing
 * (2: some attempts are infrastructure errors, retry to resume) — see `ROLLOUT_EXIT_CODES`.
 *
 * @example
 * const { exitCode } = await runRolloutShard({ spec, shardIndex: 0, shardCount: 4, ports, model, provider, workDir });
 */
import { join } from 'node:path';
import { harnessGrader, registryJudgeResolver } from '../harness/attempt/harness-grader.ts';
import { createModel } from '../models/create-model.ts';
import { loadSuite, type SuiteTask } from '../harness/eval/load-suite.ts';
import type { EvalResults } from '../harness/eval/eval-results.ts';
import { runEval, type EvalProgress } from '../harness/eval/run-eval.ts';
import { shardTasks } from '../harness/eval/shard-tasks.ts';
import { prepareTaskSource } from '../harness/task/prepare-task-source.ts';
import type { SandboxProvider } from '../harness/sandbox/sandbox.ts';
import { parseTask } from '../harness/task/task-schema.ts';
import { ValidationError } from '../errors.ts';
import type { BlobsPort } from '../ports/blobs.ts';
import type { ModelsPort } from '../ports/models.ts';
import type { RecordsPort } from '../ports/records.ts';
import { ROLLOUT_EXIT_CODES, type RolloutExitCode } from './rollout-exit-codes.ts';
import type { ShardSpec } from './shard-spec.ts';

export interface RunRolloutShardInput {
  spec: ShardSpec;
  shardIndex: number;
  shardCount: number;
  ports: { records: RecordsPort; blobs: BlobsPort };
  model: ModelsPort;
  /** The rubric judge's model, for judge-graded tasks (without it they end `ungraded`). */
  judgeModel?: ModelsPort;
  /** The simulated user's model, for behavioural cases with `behaviour.simulatedUser`. */
  userModel?: ModelsPort;
  /** The models port of a registered judge whose model is not `judgeModel` (default `createModel(spec)`). */
  modelFor?: (spec: string) => ModelsPort;
  provider: SandboxProvider;
  /** Scratch space for fetched repositories. */
  workDir: string;
  /** Relative task repository paths resolve against it; default the working directory. */
  baseDir?: string;
  /** The Batch job id and attempt, recorded with the result. */
  jobId?: string;
  jobAttempt?: number;
  onProgress?: (event: EvalProgress) => void;
  now?: () => Date;
}

export type ShardStatus = 'completed' | 'incomplete';

export interface ShardResult {
  schemaVersion: 1;
  runId: string;
  /** The run id the shard's attempts are recorded under (`<runId>.shard-<index>`). */
  evalRunId: string;
  suite?: string;
  shardIndex: number;
  shardCount: number;
  status: ShardStatus;
  exitCode: RolloutExitCode;
  taskIds: string[];
  jobId?: string;
  jobAttempt?: number;
  results: EvalResults;
}

export function shardResultKey(outputPrefix: string, shardIndex: number): string {
  return `${outputPrefix}/shard-${shardIndex}.json`;
}

export const shardRecordKeys = (runId: string, shardIndex: number) => ({ pk: `ROLLOUT#${runId}`, sk: `SHARD#${String(shardIndex).padStart(5, '0')}` });

async function loadTasks(spec: ShardSpec, input: RunRolloutShardInput): Promise<SuiteTask[]> {
  if (spec.suiteDir !== undefined) return loadSuite(spec.suiteDir, { cacheDir: input.workDir, blobs: input.ports.blobs });
  const tasks: SuiteTask[] = [];
  for (const key of spec.taskKeys!) {
    const body = await input.ports.blobs.get(key);
    if (!body) throw new ValidationError(`task ${key} is not in the blob store`, [{ path: 'taskKeys', message: `missing blob ${key}` }]);
    let json: unknown;
    try {
      json = JSON.parse(new TextDecoder().decode(body));
    } catch (error) {
      throw new ValidationError(`task ${key} is not valid JSON: ${(error as Error).message}`, [{ path: 'taskKeys', message: 'invalid JSON' }]);
    }
    const task = parseTask(json, key);
    tasks.push({ task, sourceDir: '' });
  }
  return tasks;
}

/** A folder suite's tasks named by the spec's `taskIds` (all of them without it); an id the folder lacks is an error. */
function selectTasks(all: SuiteTask[], spec: ShardSpec): SuiteTask[] {
  if (spec.taskIds === undefined || spec.suiteDir === undefined) return all;
  const byId = new Map(all.map((t) => [t.task.id, t]));
  const missing = spec.taskIds.filter((id) => !byId.has(id));
  if (missing.length > 0) {
    throw new ValidationError(`shard spec taskIds name task${missing.length > 1 ? 's' : ''} the suite does not have: ${missing.slice(0, 10).join(', ')}`, [{ path: 'taskIds', message: `${missing.length} unknown` }]);
  }
  return spec.taskIds.map((id) => byId.get(id)!);
}

export async function runRolloutShard(input: RunRolloutShardInput): Promise<{ exitCode: RolloutExitCode; result: ShardResult; resultKey: string }> {
  const { spec } = input;
  const all = selectTasks(await loadTasks(spec, input), spec);
  const mine = shardTasks(all, input.shardIndex, input.shardCount);
  // A shard that runs in an environment image holds only tasks of that image (`groupTasksByImage`): another task
  // would run against the wrong toolchain and dependencies.
  if (spec.environmentImage !== undefined) {
    const strangers = mine.filter((t) => t.task.environment?.image !== spec.environmentImage);
    if (strangers.length > 0) {
      throw new ValidationError(
        `shard spec environmentImage is ${spec.environmentImage}, but task${strangers.length > 1 ? 's' : ''} ${strangers.map((t) => `${t.task.id} (${t.task.environment?.image ?? 'no image'})`).join(', ')} name${strangers.length > 1 ? '' : 's'} another`,
        [{ path: 'environmentImage', message: 'every task of the shard must name this image' }],
      );
    }
  }
  // Only this shard's repositories are fetched: relative paths resolve against baseDir, git URLs are cloned and blob
  // tarballs checked and extracted into workDir (the harness's own loader, so both paths refuse the same tarballs).
  const taskFile = join(input.baseDir ?? process.cwd(), 'task.json');
  for (const t of mine) {
    if (t.sourceDir === '') t.sourceDir = await prepareTaskSource(t.task, { taskFile, cacheDir: input.workDir, blobs: input.ports.blobs });
  }
  const evalRunId = `${spec.runId}.shard-${input.shardIndex}`;
  const results = await runEval({
    runId: evalRunId,
    tasks: mine,
    mode: spec.mode,
    attempts: spec.attempts,
    concurrency: spec.concurrency,
    model: input.model,
    ...(input.userModel ? { userModel: input.userModel } : {}),
    provider: input.provider,
    ports: input.ports,
    // The judge: the task's `grading.judge`, else the promoted `rubric-judge`, from the registry of these records.
    grade: harnessGrader({
      provider: input.provider,
      blobs: input.ports.blobs,
      ...(input.judgeModel ? { judge: { model: input.judgeModel, resolve: registryJudgeResolver(input.ports.records), modelFor: input.modelFor ?? ((spec: string) => createModel(spec)) } } : {}),
    }),
    retry: { maxTries: spec.maxTries, baseDelayMs: spec.retryDelayMs, maxDelayMs: Math.max(spec.retryDelayMs, 60_000) },
    ...(spec.checkpoint ? { policy: { checkpoint: spec.checkpoint, ...(spec.weightVersion !== undefined ? { weightVersion: spec.weightVersion } : {}) } } : {}),
    ...(input.onProgress ? { onProgress: input.onProgress } : {}),
    ...(input.now ? { now: input.now } : {}),
  });
  const incomplete = results.counts['infrastructure-error'] > 0;
  const exitCode = incomplete ? ROLLOUT_EXIT_CODES.incomplete : ROLLOUT_EXIT_CODES.completed;
  const result: ShardResult = {
    schemaVersion: 1,
    runId: spec.runId,
    evalRunId,
    ...(spec.suite ? { suite: spec.suite } : {}),
    shardIndex: input.shardIndex,
    shardCount: input.shardCount,
    status: incomplete ? 'incomplete' : 'completed',
    exitCode,
    taskIds: mine.map((t) => t.task.id),
    ...(input.jobId ? { jobId: input.jobId } : {}),
    ...(input.jobAttempt !== undefined ? { jobAttempt: input.jobAttempt } : {}),
    results,
  };
  const resultKey = shardResultKey(spec.outputPrefix, input.shardIndex);
  await input.ports.blobs.put(resultKey, `${JSON.stringify(result, null, 2)}\n`, { contentType: 'application/json' });
  const { perTask: _perTask, ...summary } = results;
  await input.ports.records.put({
    ...shardRecordKeys(spec.runId, input.shardIndex),
    kind: 'rollout-shard',
    runId: spec.runId,
    evalRunId,
    shardIndex: input.shardIndex,
    shardCount: input.shardCount,
    status: result.status,
    exitCode,
    taskIds: result.taskIds,
    resultKey,
    summary,
    updatedAt: (input.now ?? (() => new Date()))().toISOString(),
  });
  return { exitCode, result, resultKey };
}

