/**
 * Jobs port: batch jobs (training, rollouts, forge runs) submitted under one of the five compute categories, whose
 * fair-share weights come from the stage settings (`lib/config/stages.ts`, `computeShares`).
 *
 * Drivers: AWS Batch (`lib/drivers/aws/batch-jobs.ts`: SubmitJob with `shareIdentifier` = the category, DescribeJobs,
 * CloudWatch Logs, TerminateJob) and local child processes (`lib/drivers/local/local-jobs.ts`: a weighted queue over the
 * same categories, state in SQLite). Both pass `test/contract/jobs.contract.ts`.
 *
 * A job runs a command of a named job definition (an image on Batch, an entry point locally); what it needs comes in
 * `environment`, and what it reads or writes lives in blobs and records (pass keys, not bodies).
 *
 * @example
 * const { jobId } = await jobs.submit({ name: 'eval-s1', definition: 'rollout', category: 'evaluation',
 *   pool: 'gpu', arraySize: 4, environment: { FLYWHEEL_SHARD_KEY: 'sweeps/s1/shard-0.json' } });
 * const job = await jobs.describe(jobId); // job.status: 'RUNNABLE' | 'RUNNING' | 'SUCCEEDED' | …
 */

/** The five compute categories; on AWS Batch they are the fair-share identifiers of every job queue. */
export const COMPUTE_CATEGORIES = ['inference', 'training', 'data-and-reward', 'evaluation', 'research'] as const;
export type ComputeCategory = (typeof COMPUTE_CATEGORIES)[number];

/** Hardware pools: one fair-share job queue each (fair share balances only inside one queue). */
export const COMPUTE_POOLS = ['gpu', 'cpu'] as const;
export type ComputePool = (typeof COMPUTE_POOLS)[number];

/**
 * What joins a job definition's name and an environment image's hash in the name of its clone for that image
 * (`flywheel-prod-rollout-env-<hash>`): the AWS driver registers those names, the CDK grants `<name>-env-*`.
 */
export const IMAGE_DEFINITION_INFIX = '-env-';

/** AWS Batch's job states, used verbatim by both drivers. */
export const JOB_STATUSES = ['SUBMITTED', 'PENDING', 'RUNNABLE', 'STARTING', 'RUNNING', 'SUCCEEDED', 'FAILED'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const TERMINAL_JOB_STATUSES: readonly JobStatus[] = ['SUCCEEDED', 'FAILED'];

export interface JobSubmission {
  /** A name for people (Batch: letters, digits, hyphens, underscores; up to 128). */
  name: string;
  /** A job definition the deployment knows: `rollout`, `forge`, `trainer`. */
  definition: string;
  category: ComputeCategory;
  pool: ComputePool;
  /** Arguments appended to the definition's command. */
  command?: string[];
  environment?: Record<string, string>;
  /** 2–10,000 makes an array job; each child sees AWS_BATCH_JOB_ARRAY_INDEX. Absent or 1: a single job. */
  arraySize?: number;
  /** Killed after this many seconds of running. */
  timeoutSeconds?: number;
  /** Retries of a failed job (Batch attempts − 1). */
  retries?: number;
  /** Makes submit idempotent: a second submit with the same token returns the first job. */
  idempotencyToken?: string;
  /**
   * Order inside the job's share (higher runs first; Batch `schedulingPriorityOverride`, 0–9999). Fair share between
   * categories is unaffected.
   */
  schedulingPriority?: number;
  /**
   * A container image to run the definition's command in instead of the definition's own (a task's environment image,
   * e.g. SWE-bench's per-instance image). Batch: a job definition cloned from `definition` with the image replaced,
   * registered once per image (`lib/drivers/aws/batch-jobs.ts`). Local: the job runs as a plain process as always
   * (the harness builds the cached environment of the task's lockfiles instead).
   */
  image?: string;
}

export interface JobChild {
  index: number;
  status: JobStatus;
  exitCode?: number;
  statusReason?: string;
}

export interface JobDescription {
  jobId: string;
  name: string;
  definition: string;
  category: ComputeCategory;
  pool: ComputePool;
  status: JobStatus;
  statusReason?: string;
  exitCode?: number;
  /** Epoch milliseconds. */
  createdAt: number;
  startedAt?: number;
  stoppedAt?: number;
  arraySize?: number;
  /** For array jobs: how many children are in each state. */
  arrayStatusSummary?: Partial<Record<JobStatus, number>>;
  /** Attempts started so far (of a single job or one child; absent for an array parent). */
  attempts?: number;
  /** The container image the job was submitted to run in (`JobSubmission.image`), when one was named. */
  image?: string;
  /**
   * The environment it was submitted with (`JobSubmission.environment`; Batch: the container's), where the driver
   * answers it: compute accounting reads a job's run id from it (`lib/compute/usage/job-state-change.ts`).
   */
  environment?: Record<string, string>;
}

/** The error name `describe`, `children`, `logs` and `cancel` throw for an unknown job id. */
export const JOB_NOT_FOUND = 'JobNotFound';

export interface JobLogLine {
  /** Epoch milliseconds. */
  timestamp: number;
  message: string;
}

export interface JobsPort {
  submit(submission: JobSubmission): Promise<{ jobId: string }>;
  /** Throws `Flywheel.JobNotFound` for an unknown id. */
  describe(jobId: string): Promise<JobDescription>;
  /** The children of an array job (empty for a single job). */
  children(jobId: string): Promise<JobChild[]>;
  /** Log lines of a job (of one child with `arrayIndex`), oldest first; `nextToken` pages on. */
  logs(jobId: string, options?: { arrayIndex?: number; nextToken?: string; limit?: number }): Promise<{ lines: JobLogLine[]; nextToken?: string }>;
  /** Stops a job whatever its state; a finished job is left as it is. */
  cancel(jobId: string, reason: string): Promise<void>;
  /** Jobs of a category and status, newest first. */
  list(filter: { category?: ComputeCategory; status?: JobStatus; pool?: ComputePool }): Promise<JobDescription[]>;
}
