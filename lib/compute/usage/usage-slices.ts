/**
 * A job's usage, cut at UTC midnights into one slice per day it ran: GPU-hours (GPUs × hours), CPU-hours (vCPUs ×
 * hours) and money (hours × its price: per GPU-hour when it asked for GPUs, else per vCPU-hour; `lib/compute/prices.ts`).
 *
 * @example
 * usageSlices(job, Date.now()); // [{ day: '2026-12-03', gpuHours: 2, cpuHours: 16, costUsd: 1.9552, … }]
 */
import { COMPUTE_PRICES, type ComputePrices } from '../prices.ts';
import type { JobPrice, JobUsageRecord, UsageSlice } from '../schemas.ts';

const DAY_MS = 86_400_000;

/** The price of a job's hours from the price table. */
export function priceOf(job: { gpus: number }, prices: ComputePrices = COMPUTE_PRICES): JobPrice {
  return job.gpus > 0
    ? { basis: 'gpu-hour', usdPerHour: prices.gpuHourUsd, instanceType: prices.gpuInstanceType }
    : { basis: 'vcpu-hour', usdPerHour: prices.vcpuHourUsd, instanceType: prices.cpuInstanceType };
}

/** The intervals a job ran: its attempts', else startedAt to stoppedAt (to `now` while it runs). */
export function runIntervals(job: Pick<JobUsageRecord, 'attempts' | 'startedAt' | 'stoppedAt'>, now: number): Array<[number, number]> {
  if (job.attempts && job.attempts.length > 0) return job.attempts.map((a) => [a.startedAt, a.stoppedAt]);
  if (job.startedAt === undefined) return [];
  const end = job.stoppedAt ?? now;
  return end > job.startedAt ? [[job.startedAt, end]] : [];
}

/** The UTC day of an epoch ms, `YYYY-MM-DD`. */
export function dayOf(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/**
 * Slices of a job's usage per UTC day (none for an array parent: its children carry it). `now` ends a running job's
 * open interval.
 */
export function usageSlices(job: JobUsageRecord, now: number): UsageSlice[] {
  if (job.arrayParent) return [];
  const seconds = new Map<string, number>();
  for (const [start, end] of runIntervals(job, now)) {
    for (let from = start; from < end; ) {
      const midnight = (Math.floor(from / DAY_MS) + 1) * DAY_MS;
      const to = Math.min(end, midnight);
      const day = dayOf(from);
      seconds.set(day, (seconds.get(day) ?? 0) + (to - from) / 1000);
      from = to;
    }
  }
  return [...seconds].sort(([a], [b]) => a.localeCompare(b)).map(([day, s]) => {
    const hours = s / 3600;
    const gpuHours = job.gpus * hours;
    const cpuHours = job.vcpus * hours;
    const costUsd = (job.price.basis === 'gpu-hour' ? gpuHours : cpuHours) * job.price.usdPerHour;
    return { jobId: job.jobId, category: job.category, ...(job.runId ? { runId: job.runId } : {}), day, seconds: s, gpuHours, cpuHours, costUsd };
  });
}
