/**
 * Records one job state change (AWS Batch's EventBridge event, or the local jobs driver's transition) into the job's
 * usage record, and, once the job has ended, its usage per UTC day (GPU-hours, CPU-hours, USD at the price table's
 * prices), then checks the budgets of its category and run.
 *
 * Idempotent on (jobId, status): a state already applied is skipped (its marker is written last, so a change that
 * failed half-way is applied again in full). Out-of-order safe: the furthest status wins (a RUNNING after a SUCCEEDED
 * changes nothing), and the timestamps and resources of the furthest event win over earlier ones, while an earlier
 * event only fills in what is missing. Concurrent writers of one job retry on the record's revision.
 *
 * @example
 * const { job, duplicate } = await recordJobStateChange(ports, jobStateChangeFromBatchEvent(event));
 */
import { TransientError, ValidationError } from '../../errors.ts';
import type { NoticeDeliveryOptions } from '../../people/notices/raise-notice.ts';
import { TERMINAL_JOB_STATUSES, type JobStatus } from '../../ports/jobs.ts';
import type { Ports } from '../../ports/ports.ts';
import { checkComputeBudgets, type BudgetCrossing } from '../budgets/check-compute-budgets.ts';
import { jobUsageRecord, stateSeenRecord, usageSliceRecord } from '../record-codecs.ts';
import { computeKeys } from '../record-keys.ts';
import type { JobUsageRecord } from '../schemas.ts';
import type { JobStateChange } from './job-state-change.ts';
import { priceOf, usageSlices } from './usage-slices.ts';

export interface RecordJobStateChangeResult {
  job: JobUsageRecord;
  /** This (jobId, status) was applied before: nothing changed. */
  duplicate: boolean;
  /** Budget thresholds this change crossed (each told once). */
  crossings: BudgetCrossing[];
}

export type RecordJobStatePorts = Pick<Ports, 'records' | 'now'> & Partial<Pick<Ports, 'events'>>;

const RANK: Record<JobStatus, number> = { SUBMITTED: 0, PENDING: 1, RUNNABLE: 2, STARTING: 3, RUNNING: 4, SUCCEEDED: 5, FAILED: 5 };
const MAX_TRIES = 20;

export async function recordJobStateChange(ports: RecordJobStatePorts, change: JobStateChange, options?: NoticeDeliveryOptions): Promise<RecordJobStateChangeResult> {
  const seen = computeKeys.stateSeen(change.jobId, change.status);
  const key = computeKeys.job(change.jobId);
  if (await ports.records.get(seen.pk, seen.sk)) {
    const job = jobUsageRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
    if (job) return { job, duplicate: true, crossings: [] };
  }
  for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
    const current = jobUsageRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
    const merged = current ? mergeChange(current, change, ports.now()) : await firstRecord(ports, change);
    const ended = TERMINAL_JOB_STATUSES.includes(merged.status) && !merged.arrayParent;
    const timesChanged = !current || current.status !== merged.status || current.startedAt !== merged.startedAt || current.stoppedAt !== merged.stoppedAt || JSON.stringify(current.attempts) !== JSON.stringify(merged.attempts);
    const slices = ended && timesChanged ? usageSlices(merged, ports.now().getTime()) : [];
    if (ended && timesChanged) merged.costUsd = slices.reduce((a, s) => a + s.costUsd, 0);
    // Slices first: a writer that loses the race below writes the same slices again (idempotent overwrites).
    if (slices.length > 0) await ports.records.putMany(slices.map((s) => usageSliceRecord.encode(s)));
    const { written } = await ports.records.put(jobUsageRecord.encode(merged), {
      condition: current ? { kind: 'unchanged', field: 'revision', value: current.revision } : { kind: 'absent' },
    });
    if (!written) continue;
    const crossings = slices.length > 0 ? await checkComputeBudgets(ports, { category: merged.category, ...(merged.runId ? { runId: merged.runId } : {}), days: slices.map((s) => s.day) }, options) : [];
    await ports.records.put(stateSeenRecord.encode({ jobId: change.jobId, status: change.status, at: ports.now().toISOString() }));
    return { job: merged, duplicate: false, crossings };
  }
  throw new TransientError(`job ${change.jobId}: its usage record kept changing under ${MAX_TRIES} tries; retry`);
}

/** The record of a job's first change seen; an array child without a category takes its parent's. */
async function firstRecord(ports: RecordJobStatePorts, change: JobStateChange): Promise<JobUsageRecord> {
  let category = change.category;
  let runId = change.runId;
  const parentId = change.jobId.includes(':') ? change.jobId.slice(0, change.jobId.lastIndexOf(':')) : undefined;
  if ((!category || !runId) && parentId) {
    const parent = jobUsageRecord.decodeIfPresent(await ports.records.get(computeKeys.job(parentId).pk, 'USAGE'));
    if (!category && !parent) throw new TransientError(`job ${change.jobId}: no category, and its parent ${parentId} is not recorded yet; retry`);
    category ??= parent?.category;
    runId ??= parent?.runId;
  }
  if (!category) throw new ValidationError(`job ${change.jobId} has no compute category (shareIdentifier): not a Flywheel job`, [{ path: 'detail.shareIdentifier', message: 'one of the five compute categories' }]);
  const gpus = change.gpus ?? (change.pool === 'gpu' ? 1 : 0);
  const record: JobUsageRecord = {
    jobId: change.jobId,
    name: change.name,
    category,
    ...(runId ? { runId } : {}),
    ...(change.queue ? { queue: change.queue } : {}),
    pool: change.pool ?? (gpus > 0 ? 'gpu' : 'cpu'),
    status: change.status,
    createdAt: change.createdAt ?? change.startedAt ?? ports.now().getTime(),
    ...(change.startedAt !== undefined ? { startedAt: change.startedAt } : {}),
    ...(change.stoppedAt !== undefined ? { stoppedAt: change.stoppedAt } : {}),
    ...(change.attempts ? { attempts: change.attempts } : {}),
    gpus,
    vcpus: change.vcpus ?? 0,
    memoryMiB: change.memoryMiB ?? 0,
    price: priceOf({ gpus }),
    arrayParent: change.arrayParent ?? false,
    statusesSeen: [change.status],
    updatedAt: ports.now().toISOString(),
    revision: 1,
  };
  return record;
}

/** `current` with `change` laid in: the furthest status and its event's facts win; an earlier event fills gaps only. */
export function mergeChange(current: JobUsageRecord, change: JobStateChange, now: Date): JobUsageRecord {
  const ahead = RANK[change.status] > RANK[current.status] || (RANK[change.status] === RANK[current.status] && !TERMINAL_JOB_STATUSES.includes(current.status));
  const pick = <T>(mine: T | undefined, theirs: T | undefined): T | undefined => (ahead ? (theirs ?? mine) : (mine ?? theirs));
  const startedAt = pick(current.startedAt, change.startedAt);
  const stoppedAt = pick(current.stoppedAt, change.stoppedAt);
  const attempts = pick(current.attempts, change.attempts);
  const queue = current.queue ?? change.queue;
  const runId = current.runId ?? change.runId;
  const gpus = change.gpus !== undefined && ahead ? change.gpus : current.gpus;
  const merged: JobUsageRecord = {
    ...current,
    status: ahead ? change.status : current.status,
    ...(runId ? { runId } : {}),
    ...(queue ? { queue } : {}),
    ...(startedAt !== undefined ? { startedAt } : {}),
    ...(stoppedAt !== undefined ? { stoppedAt } : {}),
    ...(attempts ? { attempts } : {}),
    gpus,
    vcpus: (ahead ? change.vcpus : undefined) ?? (current.vcpus || change.vcpus) ?? 0,
    memoryMiB: (ahead ? change.memoryMiB : undefined) ?? (current.memoryMiB || change.memoryMiB) ?? 0,
    price: gpus === current.gpus ? current.price : priceOf({ gpus }),
    statusesSeen: current.statusesSeen.includes(change.status) ? current.statusesSeen : [...current.statusesSeen, change.status],
    updatedAt: now.toISOString(),
    revision: current.revision + 1,
  };
  return merged;
}
