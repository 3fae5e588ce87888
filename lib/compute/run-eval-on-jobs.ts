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
 * @example
 * const results = await runEvalOnJobs({ runId: 'nightly-1', suiteDir: '/abs/tasks', taskIds, model: 'openai:m@http://…/v1',
 *   modelId: 'm', mode: 'strict', attempts: 2, concurrency: 1, maxTries: 3, retryDelayMs: 2000, shards: 4, ports, jobs });
 */
import { ValidationError } from '../errors.ts';
import type { HarnessMode } from '../harness/sandbox/sandbox.ts';
import { listAttemptRecords, type AttemptRecord } from '../harness/attempt/attempt-record.ts';
import { summarizeAttempts, type EvalResults } from '../harness/eval/run-eval.ts';
import type { BlobsPort } from '../ports/blobs.ts';
import type { JobDescription, JobsPort } from '../ports/jobs.ts';
import type { RecordsPort } from '../ports/records.ts';
import { shardResultKey, type ShardResult } from './run-rollout-shard.ts';
import { SHARD_SPEC_SCHEMA_VERSION, type ShardSpecInput } from './shard-spec.ts';
import { waitForJob } from './wait-for-job.ts';

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
  /** Children of the array job (1: a single job). */
  shards: number;
  /**
   * The environment image every task of the run names (see `groupTasksByImage`): the job runs under the job definition
   * for that image. Tasks of several images are several runs.
   */
  image?: string;
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
  const outputPrefix = `evals/${input.runId}`;
  const specKey = `${outputPrefix}/shard-spec.json`;
  const spec: ShardSpecInput = {
    schemaVersion: SHARD_SPEC_SCHEMA_VERSION,
    runId: input.runId,
    ...(input.suite ? { suite: input.suite } : {}),
    suiteDir: input.suiteDir,
    model: input.model,
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
  // A run id is one run: the same id again resumes it, so it must ask for the same thing. Another mode, suite, model
  // or shard count would deal the tasks to other children (counting attempts twice) or read a spec being replaced.
  const stored = await input.ports.blobs.get(specKey);
  if (stored) {
    const before = JSON.parse(new TextDecoder().decode(stored)) as ShardSpecInput;
    const differs = (['suiteDir', 'model', 'mode', 'attempts', 'shardCount'] as const).filter((f) => before[f] !== spec[f]);
    if (differs.length > 0) {
      throw new ValidationError(
        `run ${input.runId} was started with other ${differs.join(', ')} (${differs.map((f) => `${f} ${String(before[f])}`).join(', ')}); resume it with the same, or use a new --run-id`,
        differs.map((f) => ({ path: f, message: `was ${String(before[f])}` })),
      );
    }
  }
  await input.ports.blobs.put(specKey, `${JSON.stringify(spec, null, 2)}\n`, { contentType: 'application/json' });
  const submission = {
    name: `eval-${input.runId}`.slice(0, 128),
    definition: ROLLOUT_DEFINITION,
    category: 'evaluation' as const,
    pool: 'gpu' as const,
    environment: { FLYWHEEL_SHARD_KEY: specKey, FLYWHEEL_SHARD_COUNT: String(input.shards) },
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
  const results = summarizeAttempts(records, {
    runId: input.runId,
    mode: input.mode,
    model: input.modelId,
    attemptsPerTask: input.attempts,
    concurrency: input.concurrency,
    taskIds: input.taskIds,
    ran,
    skipped,
    startedAt,
    finishedAt: now(),
  });
  return { results, job };
}
