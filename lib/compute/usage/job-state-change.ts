/**
 * A job state change in one shape, whichever driver saw it: AWS Batch's EventBridge event (`aws.batch`, detail-type
 * `Batch Job State Change`, whose detail is a DescribeJobs job) or the local jobs driver's job (`JobDescription` with
 * the environment it was submitted with). `recordJobStateChange` takes this shape.
 *
 * The run a job belongs to comes from what its submitter set: the tag `flywheel:run-id`, else the environment's
 * `FLYWHEEL_RUN_ID` (eval runs), `FLYWHEEL_SWEEP_ID` (sweep shards), `FLYWHEEL_TRAIN_RUN_ID` (training runs).
 *
 * @example
 * const change = jobStateChangeFromBatchEvent(JSON.parse(sqsRecord.body));
 * await recordJobStateChange(ports, change);
 */
import { z } from 'zod';
import { ValidationError } from '../../errors.ts';
import { COMPUTE_CATEGORIES, COMPUTE_POOLS, JOB_STATUSES, type ComputeCategory, type ComputePool, type JobDescription, type JobStatus } from '../../ports/jobs.ts';
import { toFieldIssues } from '../../shared/field-issues.ts';

export interface JobStateChange {
  jobId: string;
  name: string;
  status: JobStatus;
  /** Absent on an array child whose event did not carry the share identifier: the parent's is used. */
  category?: ComputeCategory;
  pool?: ComputePool;
  runId?: string;
  queue?: string;
  /** Epoch ms. */
  createdAt?: number;
  startedAt?: number;
  stoppedAt?: number;
  /** Running intervals of the attempts that ran (Batch lists them on the job). */
  attempts?: Array<{ startedAt: number; stoppedAt: number }>;
  gpus?: number;
  vcpus?: number;
  memoryMiB?: number;
  /** An array job's parent (its children carry the usage). */
  arrayParent?: boolean;
}

/** The tag and the environment variables, in order, that name a job's run. */
export const RUN_ID_TAG = 'flywheel:run-id';
export const RUN_ID_ENVIRONMENT = ['FLYWHEEL_RUN_ID', 'FLYWHEEL_SWEEP_ID', 'FLYWHEEL_TRAIN_RUN_ID'] as const;

/** The run id a job's tags or environment name, if any. */
export function runIdOf(tags: Record<string, string> | undefined, environment: Record<string, string> | undefined): string | undefined {
  const tagged = tags?.[RUN_ID_TAG];
  if (tagged) return tagged;
  for (const name of RUN_ID_ENVIRONMENT) {
    const value = environment?.[name];
    if (value) return value;
  }
  return undefined;
}

const ms = z.number().int().nonnegative();
const nameValue = z.array(z.object({ name: z.string(), value: z.string().optional() })).optional();
const resources = z.array(z.object({ type: z.string(), value: z.string() })).optional();

/** The part of a Batch job state change event this accounting reads (the rest is kept by Batch, not here). */
export const BatchJobStateChangeEvent = z.object({
  source: z.literal('aws.batch'),
  'detail-type': z.literal('Batch Job State Change'),
  detail: z.object({
    jobId: z.string().min(1),
    jobName: z.string(),
    jobQueue: z.string().optional(),
    status: z.enum(JOB_STATUSES),
    shareIdentifier: z.string().optional(),
    createdAt: ms.optional(),
    startedAt: ms.optional(),
    stoppedAt: ms.optional(),
    tags: z.record(z.string(), z.string()).optional(),
    attempts: z.array(z.object({ startedAt: ms.optional(), stoppedAt: ms.optional() })).optional(),
    arrayProperties: z.object({ size: z.number().int().optional(), index: z.number().int().optional() }).optional(),
    container: z
      .object({ vcpus: z.number().optional(), memory: z.number().optional(), environment: nameValue, resourceRequirements: resources })
      .optional(),
    // Multi-node and EKS jobs are not submitted by Flywheel; their resources are not read.
  }),
});
export type BatchJobStateChangeEvent = z.infer<typeof BatchJobStateChangeEvent>;

/**
 * The state change of a Batch event; throws `ValidationError` naming the field when it is not one (the consumer
 * dead-letters it: a retry cannot fix it).
 *
 * @example
 * jobStateChangeFromBatchEvent({ source: 'aws.batch', 'detail-type': 'Batch Job State Change', detail: { jobId: 'j1', jobName: 'eval', status: 'RUNNING', … } });
 */
export function jobStateChangeFromBatchEvent(event: unknown): JobStateChange {
  const parsed = BatchJobStateChangeEvent.safeParse(event);
  if (!parsed.success) {
    const issues = toFieldIssues(parsed.error.issues);
    throw new ValidationError(`not a Batch job state change: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
  }
  const d = parsed.data.detail;
  const environment = Object.fromEntries((d.container?.environment ?? []).map((e) => [e.name, e.value ?? '']));
  const requirement = (type: string) => {
    const value = d.container?.resourceRequirements?.find((r) => r.type === type)?.value;
    return value === undefined ? undefined : Number(value);
  };
  const gpus = requirement('GPU') ?? 0;
  const vcpus = requirement('VCPU') ?? d.container?.vcpus;
  const memoryMiB = requirement('MEMORY') ?? d.container?.memory;
  const category = (COMPUTE_CATEGORIES as readonly string[]).includes(d.shareIdentifier ?? '') ? (d.shareIdentifier as ComputeCategory) : undefined;
  const attempts = (d.attempts ?? []).flatMap((a) => (a.startedAt !== undefined && a.stoppedAt !== undefined && a.stoppedAt >= a.startedAt ? [{ startedAt: a.startedAt, stoppedAt: a.stoppedAt }] : []));
  const runId = runIdOf(d.tags, environment);
  const arrayParent = d.arrayProperties?.size !== undefined && d.arrayProperties.index === undefined;
  return {
    jobId: d.jobId,
    name: d.jobName,
    status: d.status,
    ...(category ? { category } : {}),
    // The pool follows the hardware the job asked for (the GPU queue's jobs ask for GPUs).
    ...(d.container ? { pool: gpus > 0 ? 'gpu' : 'cpu' } : {}),
    ...(runId ? { runId } : {}),
    ...(d.jobQueue ? { queue: d.jobQueue } : {}),
    ...(d.createdAt !== undefined ? { createdAt: d.createdAt } : {}),
    ...(d.startedAt !== undefined ? { startedAt: d.startedAt } : {}),
    ...(d.stoppedAt !== undefined ? { stoppedAt: d.stoppedAt } : {}),
    ...(attempts.length > 0 ? { attempts } : {}),
    ...(d.container ? { gpus } : {}),
    ...(vcpus !== undefined && Number.isFinite(vcpus) ? { vcpus } : {}),
    ...(memoryMiB !== undefined && Number.isFinite(memoryMiB) ? { memoryMiB } : {}),
    arrayParent,
  };
}

/**
 * What a local job stands for on AWS (the local driver runs processes, not instances): a GPU-pool job is one rollout
 * child on its own GPU instance (1 GPU, 8 vCPU, 30 GiB), a CPU-pool job 1 vCPU and 2 GiB.
 */
export const LOCAL_JOB_RESOURCES: Record<ComputePool, { gpus: number; vcpus: number; memoryMiB: number }> = {
  gpu: { gpus: 1, vcpus: 8, memoryMiB: 30 * 1024 },
  cpu: { gpus: 0, vcpus: 1, memoryMiB: 2048 },
};

/**
 * The state change a local job's description stands for (the local runtime reads them from the jobs driver).
 *
 * @example
 * jobStateChangeFromLocalJob(await jobs.describe(jobId));
 */
export function jobStateChangeFromLocalJob(job: JobDescription & { environment?: Record<string, string> }): JobStateChange {
  const runId = runIdOf(undefined, job.environment);
  const pool = (COMPUTE_POOLS as readonly string[]).includes(job.pool) ? job.pool : 'cpu';
  return {
    jobId: job.jobId,
    name: job.name,
    status: job.status,
    category: job.category,
    pool,
    ...(runId ? { runId } : {}),
    queue: `local:${pool}`,
    createdAt: job.createdAt,
    ...(job.startedAt !== undefined ? { startedAt: job.startedAt } : {}),
    ...(job.stoppedAt !== undefined ? { stoppedAt: job.stoppedAt } : {}),
    ...LOCAL_JOB_RESOURCES[pool],
    arrayParent: job.arraySize !== undefined,
  };
}
