/**
 * AWS Batch jobs driver. One fair-share job queue per pool; the category is the job's `shareIdentifier`, so the
 * queue's scheduling policy (weights from `computeShares`, converted by `lib/compute/batch-weight-factors.ts`)
 * balances the five categories.
 *
 * - `submit`: SubmitJob on the pool's queue with the named job definition, `shareIdentifier` = category,
 *   `schedulingPriorityOverride`, `arrayProperties`, `retryStrategy` (attempts = retries + 1), `timeout`, and
 *   `containerOverrides` (environment; `command` = the definition's command + the job's arguments, since Batch's
 *   override replaces the command and the port appends). The job is tagged `flywheel:category`, `flywheel:pool`,
 *   `flywheel:definition` (and `flywheel:idempotency-token`), so describe maps it back whatever the API echoes.
 * - `describe`: DescribeJobs; `children`: DescribeJobs of `<parent>:<i>` in batches of 100 (exit codes and reasons
 *   included, all states at once; ListJobs with `arrayJobId` needs one call per status); `list`: ListJobs on the
 *   pool queues (one status, or every status through a created-at filter) then DescribeJobs for the categories;
 *   `logs`: the job's `logStreamName` in CloudWatch Logs (`/aws/batch/job` unless configured); `cancel`:
 *   TerminateJob, which cancels jobs not yet STARTING and stops running ones (children of an array parent too).
 * - **Environment images.** A submission naming an `image` (a task's environment image) runs under a job definition
 *   cloned from the named definition's newest ACTIVE revision with the container image replaced and
 *   `FLYWHEEL_ENVIRONMENT_IMAGE` set: `<definition>-env-<sha256(image), 16 hex>`, registered (RegisterJobDefinition)
 *   only when no ACTIVE revision of that name already runs this image cloned from this base revision (tag
 *   `flywheel:base-definition`), so repeated submissions reuse it and a new deployment of the base definition
 *   re-clones once. The job is tagged `flywheel:environment-image`. Needs batch:RegisterJobDefinition,
 *   batch:TagResource and batch:DescribeJobDefinitions (and iam:PassRole on the definition's job and execution
 *   roles) besides SubmitJob. `BatchImageDefinitions` is that logic alone (the sweep's plan-shards registers with it).
 * - **Idempotency.** Batch has no client token, and ListJobs cannot filter by tag (only by name, definition and
 *   creation time, and only eventually consistently), so two racing submits could not see each other there.
 *   Instead the token claims a record (`JOBTOKEN#<token>`) with a conditional put before SubmitJob, and the record
 *   gets the job id after it. A second submit finds the job id; a concurrent one waits for it; a claim whose owner
 *   died before recording the id expires after `claimTtlMs` and is taken over (conditional again, so one taker).
 *   The one window left: a crash after SubmitJob and before the id is recorded, then an expired claim, submits
 *   twice; the token tag on the job lets an operator find the first.
 *
 * Configuration from the environment (`batchJobsConfigFromEnv`): FLYWHEEL_GPU_JOB_QUEUE, FLYWHEEL_CPU_JOB_QUEUE
 * (names or ARNs), FLYWHEEL_JOB_DEFINITIONS (a JSON object from Flywheel names to Batch job definition names or
 * ARNs, e.g. `{"rollout":"flywheel-dev-rollout"}`; CDK writes it with `Stack.toJsonString`), FLYWHEEL_JOB_LOG_GROUP
 * (optional).
 *
 * @example
 * const jobs = new BatchJobs(new BatchClient({}), new CloudWatchLogsClient({}), batchJobsConfigFromEnv(), { records });
 */
import {
  type BatchClient,
  DescribeJobDefinitionsCommand,
  DescribeJobsCommand,
  type JobDefinition,
  type JobDetail,
  RegisterJobDefinitionCommand,
  ListJobsCommand,
  type ListJobsCommandInput,
  SubmitJobCommand,
  type SubmitJobCommandInput,
  TerminateJobCommand,
} from '@aws-sdk/client-batch';
import { type CloudWatchLogsClient, GetLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import { createHash, randomUUID } from 'node:crypto';
import { ConfigurationError, TransientError, ValidationError } from '../../errors.ts';
import { JobNotFoundError } from '../../ports/job-errors.ts';
import { IMAGE_REFERENCE, validateJobSubmission } from '../../compute/validate-job-submission.ts';
import {
  COMPUTE_CATEGORIES,
  COMPUTE_POOLS,
  IMAGE_DEFINITION_INFIX,
  JOB_STATUSES,
  TERMINAL_JOB_STATUSES,
  type ComputeCategory,
  type ComputePool,
  type JobChild,
  type JobDescription,
  type JobLogLine,
  type JobStatus,
  type JobSubmission,
  type JobsPort,
} from '../../ports/jobs.ts';
import type { RecordsPort } from '../../ports/records.ts';

export interface BatchJobsConfig {
  /** Job queue (name or ARN) per pool. */
  queues: Record<ComputePool, string>;
  /** Flywheel definition name → Batch job definition (name, `name:revision` or ARN). */
  definitions: Record<string, string>;
  /** CloudWatch log group of the jobs; default `/aws/batch/job` (Batch's default). */
  logGroup?: string;
}

export interface BatchJobsOptions {
  /** Where idempotency tokens are claimed; without it, a submission carrying a token is refused. */
  records?: RecordsPort;
  /** How long a claim without a job id blocks others; default 60 s. */
  claimTtlMs?: number;
  /** Between looks at a claim held by another submitter; default 250 ms. */
  claimPollMs?: number;
  now?: () => number;
}

/** The variables `batchJobsConfigFromEnv` reads. */
export const BATCH_JOBS_ENV = ['FLYWHEEL_GPU_JOB_QUEUE', 'FLYWHEEL_CPU_JOB_QUEUE', 'FLYWHEEL_JOB_DEFINITIONS'] as const;

export function batchJobsConfigFromEnv(env: Record<string, string | undefined> = process.env): BatchJobsConfig {
  const missing = BATCH_JOBS_ENV.filter((name) => !env[name]);
  if (missing.length > 0) throw new ConfigurationError(`Missing environment variable${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`);
  let definitions: unknown;
  try {
    definitions = JSON.parse(env['FLYWHEEL_JOB_DEFINITIONS']!);
  } catch (error) {
    throw new ConfigurationError(`FLYWHEEL_JOB_DEFINITIONS is not JSON: ${(error as Error).message}`);
  }
  if (!definitions || typeof definitions !== 'object' || Array.isArray(definitions) || Object.values(definitions).some((v) => typeof v !== 'string' || v === '')) {
    throw new ConfigurationError('FLYWHEEL_JOB_DEFINITIONS must be a JSON object of definition names to Batch job definitions, e.g. {"rollout":"flywheel-dev-rollout"}');
  }
  return {
    queues: { gpu: env['FLYWHEEL_GPU_JOB_QUEUE']!, cpu: env['FLYWHEEL_CPU_JOB_QUEUE']! },
    definitions: definitions as Record<string, string>,
    ...(env['FLYWHEEL_JOB_LOG_GROUP'] ? { logGroup: env['FLYWHEEL_JOB_LOG_GROUP'] } : {}),
  };
}

export const BATCH_TAGS = {
  category: 'flywheel:category',
  pool: 'flywheel:pool',
  definition: 'flywheel:definition',
  idempotencyToken: 'flywheel:idempotency-token',
  /** On a job and on a cloned job definition: the environment image it runs. */
  environmentImage: 'flywheel:environment-image',
  /** On a cloned job definition: the ARN of the revision it was cloned from. */
  baseDefinition: 'flywheel:base-definition',
} as const;

/** The variable a cloned job definition sets to its image (the rollout entry point knows it runs in a task image). */
export const ENVIRONMENT_IMAGE_VARIABLE = 'FLYWHEEL_ENVIRONMENT_IMAGE';

/**
 * The name of the job definition that runs `baseName`'s command in `image`: `<baseName>-env-<16 hex of sha256(image)>`
 * (Batch names: up to 128 letters, digits, hyphens and underscores).
 *
 * @example
 * imageDefinitionName('flywheel-prod-rollout', 'swebench/sweb.eval.x86_64.django_1776_django-11099:latest') // 'flywheel-prod-rollout-env-…'
 */
export function imageDefinitionName(baseName: string, image: string): string {
  const hash = createHash('sha256').update(image).digest('hex').slice(0, 16);
  return `${baseName.slice(0, 128 - IMAGE_DEFINITION_INFIX.length - hash.length)}${IMAGE_DEFINITION_INFIX}${hash}`;
}

/** Tag values: up to 256 characters. */
const tagValue = (value: string) => value.slice(0, 256);


/** Batch's shortest attempt timeout. */
export const BATCH_MIN_TIMEOUT_SECONDS = 60;

function isNotFound(error: unknown): boolean {
  const name = (error as { name?: string }).name;
  return name === 'ResourceNotFoundException';
}

/** The newest ACTIVE revision of a definition named by name, `name:revision` or ARN; undefined when there is none. */
async function newestJobDefinition(batch: BatchClient, jobDefinition: string): Promise<JobDefinition | undefined> {
  const isArnOrRevision = jobDefinition.startsWith('arn:') || /:\d+$/.test(jobDefinition);
  const output = await batch.send(new DescribeJobDefinitionsCommand(isArnOrRevision ? { jobDefinitions: [jobDefinition] } : { jobDefinitionName: jobDefinition, status: 'ACTIVE' }));
  return [...(output.jobDefinitions ?? [])].filter((d) => d.status !== 'INACTIVE').sort((a, b) => (b.revision ?? 0) - (a.revision ?? 0))[0];
}

/**
 * The job definitions of environment images, on their own: what `BatchJobs` submits an `image` under, and what the
 * sweep's plan-shards step registers before the state machine submits a shard to it (`JobDefinition.$`). Needs
 * batch:DescribeJobDefinitions, batch:RegisterJobDefinition and batch:TagResource on `<definition>-env-*`, and
 * iam:PassRole on the base definition's job and execution roles.
 *
 * @example
 * const arn = await new BatchImageDefinitions(new BatchClient({})).definitionFor('arn:…:job-definition/flywheel-prod-rollout:7', image);
 */
export class BatchImageDefinitions {
  readonly #batch: BatchClient;
  readonly #known = new Map<string, Promise<string>>();

  constructor(batch: BatchClient) {
    this.#batch = batch;
  }

  /**
   * The ARN of the job definition that runs `jobDefinition`'s command (name, `name:revision` or ARN) in `image`:
   * the ACTIVE clone `<name>-env-<hash>` of its newest revision, registered when there is none. Remembered per
   * process; a failure is not.
   */
  definitionFor(jobDefinition: string, image: string): Promise<string> {
    if (!IMAGE_REFERENCE.test(image)) {
      return Promise.reject(new ValidationError(`image: a container image reference (registry/name:tag or name@sha256:…), up to 255 characters; got ${image.slice(0, 300)}`, [{ path: 'image', message: 'a container image reference' }]));
    }
    const key = `${jobDefinition}\0${image}`;
    let arn = this.#known.get(key);
    if (!arn) {
      arn = this.#register(jobDefinition, image);
      this.#known.set(key, arn);
      arn.catch(() => this.#known.delete(key));
    }
    return arn;
  }

  async #register(jobDefinition: string, image: string): Promise<string> {
    const base = await newestJobDefinition(this.#batch, jobDefinition);
    if (!base?.jobDefinitionArn || !base.jobDefinitionName) throw new ConfigurationError(`job definition ${jobDefinition} not found in Batch`);
    if (base.type !== 'container' || !base.containerProperties) {
      throw new ConfigurationError(`job definition ${jobDefinition} is not a single-container definition: an environment image cannot replace its image`);
    }
    const name = imageDefinitionName(base.jobDefinitionName, image);
    const existing = await newestJobDefinition(this.#batch, name);
    if (existing?.jobDefinitionArn && existing.containerProperties?.image === image && existing.tags?.[BATCH_TAGS.baseDefinition] === base.jobDefinitionArn) {
      return existing.jobDefinitionArn;
    }
    const environment = [...(base.containerProperties.environment ?? []).filter((e) => e.name !== ENVIRONMENT_IMAGE_VARIABLE), { name: ENVIRONMENT_IMAGE_VARIABLE, value: image }];
    const output = await this.#batch.send(
      new RegisterJobDefinitionCommand({
        jobDefinitionName: name,
        type: base.type,
        containerProperties: { ...base.containerProperties, image, environment },
        ...(base.parameters ? { parameters: base.parameters } : {}),
        ...(base.retryStrategy ? { retryStrategy: base.retryStrategy } : {}),
        ...(base.timeout ? { timeout: base.timeout } : {}),
        ...(base.propagateTags !== undefined ? { propagateTags: base.propagateTags } : {}),
        ...(base.platformCapabilities ? { platformCapabilities: base.platformCapabilities } : {}),
        ...(base.schedulingPriority !== undefined ? { schedulingPriority: base.schedulingPriority } : {}),
        tags: { ...(base.tags ?? {}), [BATCH_TAGS.baseDefinition]: tagValue(base.jobDefinitionArn), [BATCH_TAGS.environmentImage]: tagValue(image) },
      }),
    );
    if (!output.jobDefinitionArn) throw new ConfigurationError(`RegisterJobDefinition of ${name} answered no ARN`);
    return output.jobDefinitionArn;
  }
}

export class BatchJobs implements JobsPort {
  readonly #batch: BatchClient;
  readonly #logs: CloudWatchLogsClient;
  readonly #config: BatchJobsConfig;
  readonly #records: RecordsPort | undefined;
  readonly #claimTtlMs: number;
  readonly #claimPollMs: number;
  readonly #now: () => number;
  readonly #commands = new Map<string, Promise<string[]>>();
  readonly #images: BatchImageDefinitions;

  constructor(batch: BatchClient, logs: CloudWatchLogsClient, config: BatchJobsConfig, options: BatchJobsOptions = {}) {
    this.#batch = batch;
    this.#logs = logs;
    this.#config = config;
    this.#records = options.records;
    this.#claimTtlMs = options.claimTtlMs ?? 60_000;
    this.#claimPollMs = options.claimPollMs ?? 250;
    this.#now = options.now ?? Date.now;
    this.#images = new BatchImageDefinitions(batch);
  }

  async submit(submission: JobSubmission): Promise<{ jobId: string }> {
    validateJobSubmission(submission, Object.keys(this.#config.definitions));
    if (submission.timeoutSeconds !== undefined && submission.timeoutSeconds < BATCH_MIN_TIMEOUT_SECONDS) {
      throw new ValidationError(`timeoutSeconds: AWS Batch's shortest timeout is ${BATCH_MIN_TIMEOUT_SECONDS} s (got ${submission.timeoutSeconds})`, [{ path: 'timeoutSeconds', message: `at least ${BATCH_MIN_TIMEOUT_SECONDS}` }]);
    }
    if (submission.idempotencyToken === undefined) return { jobId: await this.#submitJob(submission) };
    if (!this.#records) throw new ConfigurationError('an idempotency token needs the records port (BatchJobs options.records)');
    return { jobId: await this.#submitOnce(this.#records, submission, submission.idempotencyToken) };
  }

  /** The SubmitJob input for a submission (exported shape: what goes on the wire). */
  async submitJobInput(submission: JobSubmission): Promise<SubmitJobCommandInput> {
    const baseDefinition = this.#config.definitions[submission.definition]!;
    const jobDefinition = submission.image !== undefined ? await this.imageDefinition(baseDefinition, submission.image) : baseDefinition;
    const environment = Object.entries(submission.environment ?? {}).map(([name, value]) => ({ name, value }));
    const command = submission.command && submission.command.length > 0 ? [...(await this.#definitionCommand(jobDefinition)), ...submission.command] : undefined;
    const tags: Record<string, string> = {
      [BATCH_TAGS.category]: submission.category,
      [BATCH_TAGS.pool]: submission.pool,
      [BATCH_TAGS.definition]: submission.definition,
      ...(submission.idempotencyToken !== undefined ? { [BATCH_TAGS.idempotencyToken]: submission.idempotencyToken } : {}),
      ...(submission.image !== undefined ? { [BATCH_TAGS.environmentImage]: tagValue(submission.image) } : {}),
    };
    return {
      jobName: submission.name,
      jobQueue: this.#config.queues[submission.pool],
      jobDefinition,
      shareIdentifier: submission.category,
      ...(submission.schedulingPriority !== undefined ? { schedulingPriorityOverride: submission.schedulingPriority } : {}),
      ...(submission.arraySize !== undefined && submission.arraySize >= 2 ? { arrayProperties: { size: submission.arraySize } } : {}),
      ...(submission.retries !== undefined ? { retryStrategy: { attempts: submission.retries + 1 } } : {}),
      ...(submission.timeoutSeconds !== undefined ? { timeout: { attemptDurationSeconds: Math.ceil(submission.timeoutSeconds) } } : {}),
      ...(environment.length > 0 || command ? { containerOverrides: { ...(environment.length > 0 ? { environment } : {}), ...(command ? { command } : {}) } } : {}),
      tags,
      propagateTags: true,
    };
  }

  async #submitJob(submission: JobSubmission): Promise<string> {
    const output = await this.#batch.send(new SubmitJobCommand(await this.submitJobInput(submission)));
    return output.jobId!;
  }

  async #submitOnce(records: RecordsPort, submission: JobSubmission, token: string): Promise<string> {
    const key = { pk: `JOBTOKEN#${token}`, sk: 'JOB' };
    const deadline = this.#now() + this.#claimTtlMs * 2;
    for (;;) {
      const existing = await records.get(key.pk, key.sk);
      if (typeof existing?.['jobId'] === 'string') return existing['jobId'];
      const now = this.#now();
      const claimId = randomUUID();
      const { written } = await records.put(
        { ...key, kind: 'job-idempotency', claimId, claimExpiresAt: now + this.#claimTtlMs, createdAt: new Date(now).toISOString() },
        { condition: { kind: 'absentOrOlder', field: 'claimExpiresAt', value: now } },
      );
      if (written) {
        const jobId = await this.#submitJob(submission);
        // The claim never expires once it names its job.
        await records.put({ ...key, kind: 'job-idempotency', claimId, jobId, claimExpiresAt: Number.MAX_SAFE_INTEGER, createdAt: new Date(now).toISOString() });
        return jobId;
      }
      if (this.#now() > deadline) throw new TransientError(`idempotency token ${token}: another submitter holds the claim and has not recorded a job`);
      await new Promise((r) => setTimeout(r, this.#claimPollMs));
    }
  }

  async #definitionCommand(jobDefinition: string): Promise<string[]> {
    let command = this.#commands.get(jobDefinition);
    if (!command) {
      command = (async () => {
        const newest = await newestJobDefinition(this.#batch, jobDefinition);
        if (!newest) throw new ConfigurationError(`job definition ${jobDefinition} not found in Batch`);
        return newest.containerProperties?.command ?? [];
      })();
      this.#commands.set(jobDefinition, command);
      command.catch(() => this.#commands.delete(jobDefinition));
    }
    return command;
  }

  /**
   * The ARN of the job definition that runs `jobDefinition`'s command in `image`, registering it when needed (see
   * the file's comment and `BatchImageDefinitions`). Remembered per process; a failure is not.
   */
  imageDefinition(jobDefinition: string, image: string): Promise<string> {
    return this.#images.definitionFor(jobDefinition, image);
  }

  async #details(jobIds: string[]): Promise<JobDetail[]> {
    const out: JobDetail[] = [];
    for (let i = 0; i < jobIds.length; i += 100) {
      const output = await this.#batch.send(new DescribeJobsCommand({ jobs: jobIds.slice(i, i + 100) }));
      out.push(...(output.jobs ?? []));
    }
    return out;
  }

  async #detail(jobId: string): Promise<JobDetail> {
    const [job] = await this.#details([jobId]);
    if (!job) throw new JobNotFoundError(jobId);
    return job;
  }

  #definitionName(job: JobDetail): string {
    const tagged = job.tags?.[BATCH_TAGS.definition];
    if (tagged) return tagged;
    const arn = job.jobDefinition ?? '';
    for (const [name, value] of Object.entries(this.#config.definitions)) {
      const base = value.replace(/^arn:.*:job-definition\//, '').replace(/:\d+$/, '');
      if (arn.includes(`:job-definition/${base}:`) || arn === value) return name;
    }
    return arn;
  }

  #pool(job: JobDetail): ComputePool {
    const tagged = job.tags?.[BATCH_TAGS.pool];
    if (tagged && (COMPUTE_POOLS as readonly string[]).includes(tagged)) return tagged as ComputePool;
    const queue = job.jobQueue ?? '';
    for (const pool of COMPUTE_POOLS) {
      const configured = this.#config.queues[pool];
      if (queue === configured || queue.endsWith(`:job-queue/${configured}`) || configured.endsWith(`:job-queue/${queue}`)) return pool;
    }
    return 'gpu';
  }

  #category(job: JobDetail): ComputeCategory | undefined {
    const value = job.shareIdentifier ?? job.tags?.[BATCH_TAGS.category];
    return (COMPUTE_CATEGORIES as readonly string[]).includes(value ?? '') ? (value as ComputeCategory) : undefined;
  }

  #description(job: JobDetail): JobDescription {
    const size = job.arrayProperties?.size;
    const d: JobDescription = {
      jobId: job.jobId!,
      name: job.jobName!,
      definition: this.#definitionName(job),
      category: this.#category(job) ?? 'research',
      pool: this.#pool(job),
      status: job.status as JobStatus,
      createdAt: job.createdAt!,
      ...(job.statusReason ? { statusReason: job.statusReason } : {}),
      ...(job.container?.exitCode !== undefined && job.container.exitCode !== null ? { exitCode: job.container.exitCode } : {}),
      ...(job.startedAt ? { startedAt: job.startedAt } : {}),
      ...(job.stoppedAt ? { stoppedAt: job.stoppedAt } : {}),
      ...(job.tags?.[BATCH_TAGS.environmentImage] ? { image: job.tags[BATCH_TAGS.environmentImage] } : {}),
    };
    if (size !== undefined && size >= 2) {
      d.arraySize = size;
      d.arrayStatusSummary = Object.fromEntries(Object.entries(job.arrayProperties?.statusSummary ?? {}).filter(([, n]) => n > 0)) as Partial<Record<JobStatus, number>>;
    } else {
      d.attempts = job.attempts?.length ?? 0;
    }
    return d;
  }

  async describe(jobId: string): Promise<JobDescription> {
    return this.#description(await this.#detail(jobId));
  }

  async children(jobId: string): Promise<JobChild[]> {
    const parent = await this.#detail(jobId);
    const size = parent.arrayProperties?.size;
    if (size === undefined || size < 2) return [];
    const details = await this.#details(Array.from({ length: size }, (_, i) => `${jobId}:${i}`));
    return details
      .map((child) => ({
        index: child.arrayProperties?.index ?? Number(child.jobId!.slice(child.jobId!.lastIndexOf(':') + 1)),
        status: child.status as JobStatus,
        ...(child.container?.exitCode !== undefined && child.container.exitCode !== null ? { exitCode: child.container.exitCode } : {}),
        ...(child.statusReason ? { statusReason: child.statusReason } : {}),
      }))
      .sort((a, b) => a.index - b.index);
  }

  async logs(jobId: string, options: { arrayIndex?: number; nextToken?: string; limit?: number } = {}): Promise<{ lines: JobLogLine[]; nextToken?: string }> {
    const job = await this.#detail(jobId);
    const size = job.arrayProperties?.size;
    let leaf = job;
    if (size !== undefined && size >= 2) {
      if (options.arrayIndex === undefined) throw new ValidationError(`job ${jobId} is an array job: pass arrayIndex (0–${size - 1}) for one child's log`, [{ path: 'arrayIndex', message: 'required for an array job' }]);
      leaf = await this.#detail(`${jobId}:${options.arrayIndex}`);
    } else if (options.arrayIndex !== undefined && job.arrayProperties?.index === undefined) {
      throw new ValidationError(`job ${jobId} is not an array job: arrayIndex does not apply`, [{ path: 'arrayIndex', message: 'only for array jobs' }]);
    }
    const stream = leaf.container?.logStreamName;
    if (!stream) return { lines: [] };
    try {
      const output = await this.#logs.send(
        new GetLogEventsCommand({
          logGroupName: this.#config.logGroup ?? '/aws/batch/job',
          logStreamName: stream,
          startFromHead: true,
          limit: Math.max(1, Math.min(options.limit ?? 10_000, 10_000)),
          ...(options.nextToken ? { nextToken: options.nextToken } : {}),
        }),
      );
      const lines = (output.events ?? []).map((e) => ({ timestamp: e.timestamp ?? 0, message: (e.message ?? '').replace(/\n$/, '') }));
      return { lines, ...(output.nextForwardToken ? { nextToken: output.nextForwardToken } : {}) };
    } catch (error) {
      // The stream appears with the first line the container writes.
      if (isNotFound(error)) return { lines: [] };
      throw error;
    }
  }

  async cancel(jobId: string, reason: string): Promise<void> {
    const job = await this.#detail(jobId);
    if (TERMINAL_JOB_STATUSES.includes(job.status as JobStatus)) return;
    await this.#batch.send(new TerminateJobCommand({ jobId, reason }));
  }

  /** Newest first, up to 1000, over the pool queues (one status, or every status). */
  async list(filter: { category?: ComputeCategory; status?: JobStatus; pool?: ComputePool } = {}): Promise<JobDescription[]> {
    const pools = filter.pool ? [filter.pool] : [...COMPUTE_POOLS];
    const ids: string[] = [];
    for (const pool of pools) {
      let nextToken: string | undefined;
      do {
        const input: ListJobsCommandInput = {
          jobQueue: this.#config.queues[pool],
          maxResults: 1000,
          ...(nextToken ? { nextToken } : {}),
          // Without a status ListJobs answers RUNNING jobs only; a filter makes it answer every status.
          ...(filter.status ? { jobStatus: filter.status } : { filters: [{ name: 'AFTER_CREATED_AT', values: ['0'] }] }),
        };
        const output = await this.#batch.send(new ListJobsCommand(input));
        for (const summary of output.jobSummaryList ?? []) if (summary.jobId) ids.push(summary.jobId);
        nextToken = output.nextToken;
      } while (nextToken && ids.length < 5000);
    }
    const details = await this.#details([...new Set(ids)]);
    return details
      .filter((job) => job.arrayProperties?.index === undefined && !job.jobId!.includes(':') && this.#category(job) !== undefined)
      .filter((job) => (filter.category ? this.#category(job) === filter.category : true))
      .filter((job) => (filter.status ? job.status === filter.status : JOB_STATUSES.includes(job.status as JobStatus)))
      .map((job) => this.#description(job))
      .sort((a, b) => b.createdAt - a.createdAt)
      .slice(0, 1000);
  }
}
