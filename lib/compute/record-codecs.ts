/**
 * One codec per record kind of compute accounting (keys in `record-keys.ts`).
 *
 * @example
 * await records.put(jobUsageRecord.encode(job), { condition: { kind: 'absent' } });
 * const stored = jobUsageRecord.decodeIfPresent(await records.get(k.pk, k.sk));
 */
import { z } from 'zod';
import { defineRecordCodec } from '../shared/record-codec.ts';
import { TERMINAL_JOB_STATUSES } from '../ports/jobs.ts';
import { computeKeys } from './record-keys.ts';
import { ComputeBudgetSchema, JobUsageRecordSchema, UsageSliceSchema } from './schemas.ts';

/** A job's usage, listed newest first; in the open-jobs index until it ends (its running hours are counted on read). */
export const jobUsageRecord = defineRecordCodec({
  kind: 'compute job',
  schema: JobUsageRecordSchema,
  keys: (j) => ({
    ...computeKeys.job(j.jobId),
    gsi1pk: computeKeys.allJobs,
    gsi1sk: computeKeys.jobListSort(j.createdAt, j.jobId),
    ...(!j.arrayParent && !TERMINAL_JOB_STATUSES.includes(j.status) ? { gsi2pk: computeKeys.openJobs, gsi2sk: j.jobId } : {}),
  }),
});

/** A state change already applied: the (jobId, status) pair that makes recording idempotent. */
export const stateSeenRecord = defineRecordCodec({
  kind: 'compute job state seen',
  schema: z.object({ jobId: z.string(), status: z.string(), at: z.iso.datetime() }),
  keys: (s) => computeKeys.stateSeen(s.jobId, s.status),
});

/** A job's usage on one day: by day (usage queries) and by run (run budgets). */
export const usageSliceRecord = defineRecordCodec({
  kind: 'compute usage slice',
  schema: UsageSliceSchema,
  keys: (s) => ({
    ...computeKeys.slice(s.jobId, s.day),
    gsi2pk: computeKeys.daySlices(s.day),
    gsi2sk: `${s.category}#${s.jobId}`,
    ...(s.runId ? { gsi1pk: computeKeys.runSlices(s.runId), gsi1sk: `${s.day}#${s.jobId}` } : {}),
  }),
});

export const budgetRecord = defineRecordCodec({
  kind: 'compute budget',
  schema: ComputeBudgetSchema,
  keys: (b) => ({ ...computeKeys.budget(b.scope, b.key), gsi1pk: computeKeys.allBudgets, gsi1sk: `${b.scope}#${b.key}` }),
});

/** A budget threshold crossing already told (one notice per budget, period and threshold). */
export const crossingRecord = defineRecordCodec({
  kind: 'compute budget crossing',
  schema: z.object({ scope: z.string(), key: z.string(), period: z.string(), threshold: z.number(), spentUsd: z.number(), noticeId: z.string().optional(), at: z.iso.datetime() }),
  keys: (c) => computeKeys.crossing(c.scope, c.key, c.period, c.threshold),
});
