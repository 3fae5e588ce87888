/**
 * What compute accounting stores and answers: a job's usage record (one per Batch or local job, merged from its state
 * changes), its per-day usage slices, budgets per category and per run, and the shapes of `GET /v1/jobs`,
 * `GET /v1/compute/usage` and `GET|POST /v1/compute/budgets`.
 */
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { COMPUTE_CATEGORIES, COMPUTE_POOLS, JOB_STATUSES } from '../ports/jobs.ts';

extendZodWithOpenApi(z);

const DAY = /^\d{4}-\d{2}-\d{2}$/;
/** A UTC day, `YYYY-MM-DD`, that is a real date. */
export const Day = z
  .string()
  .regex(DAY, 'a date as YYYY-MM-DD')
  .refine((d) => !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d), 'not a calendar date');

export const JobStatusSchema = z.enum(JOB_STATUSES);
export const ComputeCategorySchema = z.enum(COMPUTE_CATEGORIES);
/** Run ids as the submitters set them (sweep ids, training run ids, eval run ids). */
export const RunId = z.string().min(1).max(256).regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]*$/, 'letters, digits and . _ : / -');

/** How a job's hours are priced (`lib/compute/prices.ts`): per GPU-hour when it asked for GPUs, else per vCPU-hour. */
export const JobPrice = z.object({ basis: z.enum(['gpu-hour', 'vcpu-hour']), usdPerHour: z.number().nonnegative(), instanceType: z.string() });
export type JobPrice = z.infer<typeof JobPrice>;

/** One running interval of a job (an attempt), epoch ms. */
export const RunInterval = z.object({ startedAt: z.number().int(), stoppedAt: z.number().int() });

/**
 * One job's usage record: the merge of every state change seen for it, whatever their order (the furthest status
 * wins; timestamps and resources fill in from whichever event carried them).
 */
export const JobUsageRecordSchema = z.object({
  jobId: z.string().min(1),
  name: z.string(),
  category: ComputeCategorySchema,
  runId: z.string().optional(),
  /** The Batch job queue's ARN, or `local:<pool>`. */
  queue: z.string().optional(),
  pool: z.enum(COMPUTE_POOLS),
  status: JobStatusSchema,
  /** Epoch ms. */
  createdAt: z.number().int(),
  startedAt: z.number().int().optional(),
  stoppedAt: z.number().int().optional(),
  /** The attempts' running intervals, when the terminal event listed them (Batch's `attempts`). */
  attempts: z.array(RunInterval).optional(),
  gpus: z.number().nonnegative(),
  vcpus: z.number().nonnegative(),
  memoryMiB: z.number().nonnegative(),
  price: JobPrice,
  /** An array job's parent: listed, but its children carry the usage. */
  arrayParent: z.boolean(),
  statusesSeen: z.array(JobStatusSchema),
  /** Set once its usage slices are written (terminal and started). */
  costUsd: z.number().nonnegative().optional(),
  updatedAt: z.iso.datetime(),
  revision: z.number().int().min(1),
});
export type JobUsageRecord = z.infer<typeof JobUsageRecordSchema>;

/** A job's usage on one UTC day (written when the job ends; a running job's is computed when asked). */
export const UsageSliceSchema = z.object({
  jobId: z.string().min(1),
  category: ComputeCategorySchema,
  runId: z.string().optional(),
  day: Day,
  seconds: z.number().nonnegative(),
  gpuHours: z.number().nonnegative(),
  cpuHours: z.number().nonnegative(),
  costUsd: z.number().nonnegative(),
});
export type UsageSlice = z.infer<typeof UsageSliceSchema>;

export const BUDGET_SCOPES = ['category', 'run'] as const;
export type BudgetScope = (typeof BUDGET_SCOPES)[number];

/** A budget: USD per calendar month (UTC) for a category, over its whole life for a run. */
export const ComputeBudgetSchema = z
  .object({
    scope: z.enum(BUDGET_SCOPES),
    key: z.string().min(1).max(256),
    limitUsd: z.number().positive(),
    period: z.enum(['month', 'lifetime']),
    updatedAt: z.iso.datetime(),
    updatedBy: z.string(),
  })
  .openapi('ComputeBudget');
export type ComputeBudget = z.infer<typeof ComputeBudgetSchema>;

/** `POST /v1/compute/budgets`: exactly one of `category` or `runId`, and the limit. */
export const PutComputeBudgetInput = z
  .strictObject({
    category: ComputeCategorySchema.optional(),
    runId: RunId.optional(),
    limitUsd: z.number().positive().max(1e9),
  })
  .openapi('PutComputeBudgetInput');
export type PutComputeBudgetInput = z.infer<typeof PutComputeBudgetInput>;

export const USAGE_GROUPS = ['category', 'run', 'day'] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];
/** The most days one usage query spans. */
export const USAGE_MAX_DAYS = 366;

export const GetComputeUsageQuery = z.strictObject({
  from: Day.optional(),
  to: Day.optional(),
  groupBy: z.enum(USAGE_GROUPS).default('category'),
});

export const UsageRowSchema = z
  .object({
    category: z.string(),
    runId: z.string().optional(),
    day: z.string().optional(),
    gpuHours: z.number(),
    cpuHours: z.number(),
    costUsd: z.number(),
    jobs: z.number().int(),
  })
  .openapi('ComputeUsageRow');
export type UsageRow = z.infer<typeof UsageRowSchema>;

export const BudgetStatusSchema = z
  .object({ scope: z.enum(BUDGET_SCOPES), key: z.string(), limitUsd: z.number(), spentUsd: z.number(), crossed: z.boolean(), period: z.string() })
  .openapi('ComputeBudgetStatus');
export type BudgetStatus = z.infer<typeof BudgetStatusSchema>;

export const ComputeUsageAnswer = z
  .object({ from: z.string(), to: z.string(), groupBy: z.enum(USAGE_GROUPS), rows: z.array(UsageRowSchema), budgets: z.array(BudgetStatusSchema) })
  .openapi('ComputeUsage');
export type ComputeUsageAnswer = z.infer<typeof ComputeUsageAnswer>;

export const JOBS_PAGE_MAX = 200;
export const ListJobsQuery = z.strictObject({
  status: JobStatusSchema.optional(),
  category: ComputeCategorySchema.optional(),
  /** Only the jobs of one run (a sweep, a training run, a derivation): what a stall notice links to. */
  run: z.string().min(1).max(256).optional(),
  limit: z.coerce.number().int().min(1).max(JOBS_PAGE_MAX).default(50),
  cursor: z.string().min(1).max(2048).optional(),
});
export type ListJobsQuery = z.infer<typeof ListJobsQuery>;

export const JobViewSchema = z
  .object({
    jobId: z.string(),
    name: z.string(),
    category: z.string(),
    status: JobStatusSchema,
    runId: z.string().optional(),
    queue: z.string().optional(),
    createdAt: z.number().optional(),
    startedAt: z.number().optional(),
    stoppedAt: z.number().optional(),
    gpus: z.number(),
    vcpus: z.number(),
    costUsd: z.number().optional(),
  })
  .openapi('ComputeJob');
export type JobView = z.infer<typeof JobViewSchema>;
export const JobsPage = z.object({ jobs: z.array(JobViewSchema), nextCursor: z.string().optional() }).openapi('ComputeJobsPage');
export type JobsPage = z.infer<typeof JobsPage>;
