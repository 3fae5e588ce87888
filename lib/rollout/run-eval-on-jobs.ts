/**
 * An eval run as one array job on the jobs port (`flywheel eval run --jobs <n>`): the same rollout entry point a
 * sweep's Batch job runs (`batch-images/rollout/entrypoint.ts`), `n` children under the `evaluation` category, each
 * taking its slice of the suite (`shardTasks`). The shard spec goes to a blob (`evals/<runId>/shard-spec.json`: keys,
 * not bodies, in the job's environment); the results are read back from the children's attempt records
 * (`<runId>.shard-<i>`) and summarized as an in-process run would be (`summarizeAttempts`), so the table and the JSON
 * are the same whichever way the run went.
 *
 * Resumable like a run in-process: the job's idempotency token is the run id plus the try, so starting the same run
 * id again while its job runs waits for that job, and a new try after it ended skips every finished attempt (the
 * children resume from their records). The same run id with another suite, model, mode, attempts or shard count is
 * refused (`Flywheel.ValidationError`): it would deal the tasks to other children.
 *
 * Tasks that name environment images run as one such job per image (`runEvalOnJobsPerImage`, below): a job runs in
 * one image.
 *
 * @example
 * const results = await runEvalOnJobs({ runId: 'nightly-1', suiteDir: '/abs/tasks', taskIds, model: 'openai:m@http://…/v1',
 *   modelId: 'm', mode: 'strict', attempts: 2, concurrency: 1, maxTries: 3, retryDelayMs: 2000, shards: 4, ports, jobs });
 */
import { createHash } from 'node:crypto';
import { ValidationError } from '../errors.ts';
import type { Task } from '../harness/task/task-schema.ts';
import { groupTasksByImage } from './environment-images.ts';
import type { HarnessMode } from '../harness/task/harness-mode.ts';
import type { AttemptRecord } from '../harness/attempt/attempt-record.ts';
import { listAttemptRecords } from '../harness/attempt/read-attempt-records.ts';
import type { EvalResults } from '../harness/eval/eval-results.ts';
import { summarizeAttempts } from '../harness/eval/run-eval.ts';
import type { BlobsPort } from '../ports/blobs.ts';
import type { JobDescription, JobsPort } from '../ports/jobs.ts';
import type { RecordsPort } from '../ports/records.ts';
import { shardResultKey, type ShardResult } from './run-rollout-shard.ts';
import { SHARD_SPEC_SCHEMA_VERSION, type ShardSpecInput } from './shard-spec.ts';
import { waitForJob } from '../compute/wait-for-job.ts';

/** The job definition the rollout image is known by (locally `node batch-images/rollout/entrypoint.ts`). */
export const ROLLOUT_DEFINITION = 'rollout';

export interface RunEvalOnJobsInput {
  runId: string;
  /** An absolute folder of task JSON files: the children load it themselves (a local run's suite). */
  suiteDir: string;
  /** The ids of its tasks (for the summary: a task no child reached still counts, unscored). */
  taskIds: string[];
  suite?: string;
  /** The model spec the children create (`openai:<model>@<baseUrl>`, `bedrock:<id>`), and its id for the summary. */
  model: string;
  modelId: string;
  mode: HarnessMode;
  attempts: number;
  concurrency: number;
  maxTries: number;
  retryDelayMs: number;
  checkpoint?: string;
  /** The rubric judge's model spec for judge-graded tasks (default: the children's FLYWHEEL_JUDGE_MODEL). */
  judgeModel?: string;
  /** The simulated user's model spec for behavioural cases (default: the children's FLYWHEEL_USER_MODEL). */
  userModel?: string;
  /** Children of the array job (1: a single job). */
  shards: number;
  /**
   * The environment image every task of the run names (see `groupTasksByImage`): the job runs under the job definition
   * for that image. Tasks of several images are several runs (`runEvalOnJobsPerImage`).
   */
  image?: string;
  /** The children run only `taskIds` of the folder (one image group of it), not every task in it. */
  onlyTaskIds?: boolean;
  ports: { records: RecordsPort; blobs: BlobsPort };
  jobs: JobsPort;
  pollMs?: number;
  /** Told once the job is submitted (its id, for `flywheel jobs logs`). */
  onSubmitted?: (job: { jobId: string; specKey: string }) => void;
  now?: () => Date;
}

export interface EvalOnJobsResults {
  results: EvalResults;
  job: JobDescription;
}

export async function runEvalOnJobs(input: RunEvalOnJobsInput): Promise<EvalOnJobsResults> {
  const now = input.now ?? (() => new Date());
  const startedAt = now();
  const run = await runJob(input, startedAt);
  const results = summarize(input, run, input.taskIds, startedAt, now());
  return { results, job: run.job };
}

/** What one run's job left: its description, its children's attempt records and their ran / skipped counts. */
interface JobRun {
  job: JobDescription;
  records: AttemptRecord[];
  ran: number;
  skipped: number;
}

async function runJob(input: RunEvalOnJobsInput, startedAt: Date): Promise<JobRun> {
  const outputPrefix = `evals/${input.runId}`;
  const specKey = `${outputPrefix}/shard-spec.json`;
  const spec: ShardSpecInput = {
    schemaVersion: SHARD_SPEC_SCHEMA_VERSION,
    runId: input.runId,
    ...(input.suite ? { suite: input.suite } : {}),
    suiteDir: input.suiteDir,
    ...(input.onlyTaskIds ? { taskIds: input.taskIds } : {}),
    model: input.model,
    ...(input.judgeModel ? { judgeModel: input.judgeModel } : {}),
    ...(input.userModel ? { userModel: input.userModel } : {}),
    ...(input.checkpoint ? { checkpoint: input.checkpoint } : {}),
    mode: input.mode,
    attempts: input.attempts,
    concurrency: input.concurrency,
    maxTries: input.maxTries,
    retryDelayMs: input.retryDelayMs,
    shardCount: input.shards,
    ...(input.image ? { environmentImage: input.image } : {}),
    outputPrefix,
  };
  // A run id is one run: the same id again resumes it, so it must ask for the same thing. Another mode, suite, model,
  // task list or shard count would deal the tasks to other children (counting attempts twice) or read a spec being
  // replaced.
  const stored = await input.ports.blobs.get(specKey);
  if (stored) {
    const before = JSON.parse(new TextDecoder().decode(stored)) as ShardSpecInput;
    const show = (v: unknown) => (Array.isArray(v) ? `[${v.length} tasks]` : String(v));
    const differs = (['suiteDir', 'model', 'mode', 'attempts', 'shardCount', 'taskIds'] as const).filter((f) => JSON.stringify(before[f]) !== JSON.stringify(spec[f]));
    if (differs.length > 0) {
      throw new ValidationError(
        `run ${input.runId} was started with other ${differs.join(', ')} (${differs.map((f) => `${f} ${show(before[f])}`).join(', ')}); resume it with the same, or use a new --run-id`,
        differs.map((f) => ({ path: f, message: `was ${show(before[f])}` })),
      );
    }
  }
  await input.ports.blobs.put(specKey, `${JSON.stringify(spec, null, 2)}\n`, { contentType: 'application/json' });
  const submission = {
    name: `eval-${input.runId}`.slice(0, 128).replace(/[^A-Za-z0-9_-]/g, '-'),
    definition: ROLLOUT_DEFINITION,
    category: 'evaluation' as const,
    pool: 'gpu' as const,
    // FLYWHEEL_RUN_ID: the run compute accounting charges the job to (lib/compute/usage/job-state-change.ts).
    environment: { FLYWHEEL_SHARD_KEY: specKey, FLYWHEEL_SHARD_COUNT: String(input.shards), FLYWHEEL_RUN_ID: input.runId },
    ...(input.image ? { image: input.image } : {}),
    // Batch arrays start at 2; one shard is a plain job.
    ...(input.shards >= 2 ? { arraySize: input.shards } : {}),
  };
  // The same run id while its job runs waits for that job; after it ended, the next try is a new job that resumes.
  let job: JobDescription | undefined;
  for (let attempt = 0; !job; attempt++) {
    const { jobId } = await input.jobs.submit({ ...submission, idempotencyToken: `eval/${input.runId}/${attempt}` });
    const found = await input.jobs.describe(jobId);
    const ended = found.status === 'SUCCEEDED' || found.status === 'FAILED';
    if (ended && (found.createdAt ?? 0) < startedAt.getTime()) continue; // an earlier invocation's job: try the next
    input.onSubmitted?.({ jobId, specKey });
    job = await waitForJob(input.jobs, jobId, { pollMs: input.pollMs ?? 1000 });
  }
  const records: AttemptRecord[] = [];
  let ran = 0;
  let skipped = 0;
  for (let i = 0; i < input.shards; i++) {
    records.push(...(await listAttemptRecords(input.ports.records, `${input.runId}.shard-${i}`)));
    const blob = await input.ports.blobs.get(shardResultKey(outputPrefix, i));
    if (blob) {
      const shard = JSON.parse(new TextDecoder().decode(blob)) as ShardResult;
      ran += shard.results.ran;
      skipped += shard.results.skipped;
    }
  }
  return { job, records, ran, skipped };
}

function summarize(input: Pick<RunEvalOnJobsInput, 'runId' | 'mode' | 'modelId' | 'attempts' | 'concurrency'>, run: Omit<JobRun, 'job'>, taskIds: string[], startedAt: Date, finishedAt: Date): EvalResults {
  return summarizeAttempts(run.records, {
    runId: input.runId,
    mode: input.mode,
    model: input.modelId,
    attemptsPerTask: input.attempts,
    concurrency: input.concurrency,
    taskIds,
    ran: run.ran,
    skipped: run.skipped,
    startedAt,
    finishedAt,
  });
}

export interface RunEvalOnJobsPerImageInput extends Omit<RunEvalOnJobsInput, 'taskIds' | 'image' | 'onlyTaskIds' | 'onSubmitted'> {
  /** The suite's tasks (their ids and environments), as loaded from `suiteDir`. */
  tasks: ReadonlyArray<{ task: Pick<Task, 'id' | 'environment'> }>;
  /** Told once each group's job is submitted. */
  onSubmitted?: (job: { jobId: string; specKey: string; runId: string; image?: string }) => void;
}

export interface EvalOnJobsPerImageResults {
  results: EvalResults;
  /** One job per image group: its run id, image and description. */
  jobs: Array<{ runId: string; image?: string; job: JobDescription }>;
}

/**
 * The run id of an image group: the run's own for the tasks that name no image (so a suite without images runs,
 * and resumes, exactly as `runEvalOnJobs` would), `<runId>.env-<12 hex of sha256(image)>` for each image.
 */
export function imageGroupRunId(runId: string, image: string | undefined): string {
  return image === undefined ? runId : `${runId}.env-${createHash('sha256').update(image).digest('hex').slice(0, 12)}`;
}

/**
 * An eval run on the jobs port over a suite whose tasks may name environment images: one `runEvalOnJobs` job per
 * image group (`groupTasksByImage`), all at once, each running only its tasks of the folder (its own run id,
 * `imageGroupRunId`, so each resumes on its own), under the job definition of its image; the results are summarized
 * over every group's attempts, as one run. The group without an image gets `shards` children, an image group at most
 * one per task. A suite without images is exactly one `runEvalOnJobs`.
 *
 * @example
 * const { results, jobs } = await runEvalOnJobsPerImage({ runId, suiteDir, tasks, model, modelId, mode, attempts, concurrency, maxTries, retryDelayMs, shards: 4, ports, jobs });
 */
export async function runEvalOnJobsPerImage(input: RunEvalOnJobsPerImageInput): Promise<EvalOnJobsPerImageResults> {
  const now = input.now ?? (() => new Date());
  const startedAt = now();
  const groups = groupTasksByImage(input.tasks);
  const split = groups.length > 1 || groups[0]?.image !== undefined;
  const { tasks: _tasks, onSubmitted, ...rest } = input;
  const runs = await Promise.all(
    groups.map(async (group) => {
      const runId = imageGroupRunId(input.runId, group.image);
      const taskIds = group.tasks.map((t) => t.task.id);
      const run = await runJob(
        {
          ...rest,
          runId,
          taskIds,
          ...(split ? { onlyTaskIds: true } : {}),
          ...(group.image !== undefined ? { image: group.image, shards: Math.min(input.shards, taskIds.length) } : {}),
          ...(onSubmitted ? { onSubmitted: (job: { jobId: string; specKey: string }) => onSubmitted({ ...job, runId, ...(group.image !== undefined ? { image: group.image } : {}) }) } : {}),
        },
        startedAt,
      );
      return { runId, image: group.image, run };
    }),
  );
  const results = summarize(
    input,
    { records: runs.flatMap((r) => r.run.records), ran: runs.reduce((a, r) => a + r.run.ran, 0), skipped: runs.reduce((a, r) => a + r.run.skipped, 0) },
    input.tasks.map((t) => t.task.id),
    startedAt,
    now(),
  );
  return { results, jobs: runs.map((r) => ({ runId: r.runId, ...(r.image !== undefined ? { image: r.image } : {}), job: r.run.job })) };
}
