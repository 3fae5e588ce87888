/**
 * Where a sweep's attempts are: one eval run per shard (`sweepKeys.shardRunId`), its child i's attempts in the
 * partition `EVAL#<runId>.shard-<i>`. Read from the sweep's shard parts (written as each shard is aggregated) and,
 * while the sweep runs, from its plan (shards not aggregated yet), filtered by checkpoint, suite and mode on the key
 * prefix, so a filter reads only its own parts.
 */
import type { BlobsPort } from '../ports/blobs.ts';
import type { RecordsPort } from '../ports/records.ts';
import type { HarnessMode } from '../harness/task/harness-mode.ts';
import { readPlan } from '../sweeps/plan-shards.ts';
import { shardPartRecord } from '../sweeps/record-codecs.ts';
import { shardIndexOf, sweepKeys } from '../sweeps/record-keys.ts';
import type { SweepRecordBody } from '../sweeps/schemas.ts';

export interface AttemptSource {
  checkpoint: string;
  suite: string;
  mode: HarnessMode;
  /** The shard's run id; child i's attempts are under `EVAL#<runId>.shard-<i>`. */
  runId: string;
  arraySize: number;
}

export interface AttemptSourceFilter {
  checkpoint?: string;
  suite?: string;
  mode?: HarnessMode;
}

/** A running sweep (its plan may hold shards no part names yet). */
export function isRunningSweep(sweep: Pick<SweepRecordBody, 'status'>): boolean {
  return sweep.status === 'validated' || sweep.status === 'planned';
}

/**
 * The eval runs of a sweep's shards that match the filter, in key order (checkpoint, suite, mode, shard index).
 *
 * @example
 * const sources = await listAttemptSources({ records, blobs }, sweep, { checkpoint: 'coder-7b:step-100' });
 */
export async function listAttemptSources(ports: { records: RecordsPort; blobs: BlobsPort }, sweep: SweepRecordBody, filter: AttemptSourceFilter): Promise<AttemptSource[]> {
  const matches = (s: { checkpoint: string; suite: string; mode: HarnessMode }) =>
    (filter.checkpoint === undefined || s.checkpoint === filter.checkpoint) && (filter.suite === undefined || s.suite === filter.suite) && (filter.mode === undefined || s.mode === filter.mode);
  if (filter.checkpoint !== undefined && !sweep.checkpoints.includes(filter.checkpoint)) return [];
  if (filter.suite !== undefined && !sweep.suites.some((s) => s.id === filter.suite)) return [];
  // The longest key prefix the filter allows (ids never hold `#`).
  let prefix = sweepKeys.allShardPartsPrefix;
  if (filter.checkpoint !== undefined) {
    prefix += `${filter.checkpoint}#`;
    if (filter.suite !== undefined) {
      prefix += `${filter.suite}#`;
      if (filter.mode !== undefined) prefix += `${filter.mode}#`;
    }
  }
  const byRun = new Map<string, AttemptSource>();
  let cursor: string | undefined;
  do {
    const page = await ports.records.query({ partition: sweepKeys.resultPartition(sweep.sweepId), sort: { beginsWith: prefix }, limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const item of page.items) {
      const part = shardPartRecord.decode(item);
      if (matches(part)) byRun.set(part.runId, { checkpoint: part.checkpoint, suite: part.suite, mode: part.mode, runId: part.runId, arraySize: part.arraySize });
    }
    cursor = page.cursor;
  } while (cursor);
  if (isRunningSweep(sweep)) {
    for (const shard of await readPlan(ports, sweep.sweepId)) {
      if (!matches(shard)) continue;
      const runId = sweepKeys.shardRunId(sweep.sweepId, shard.checkpoint, shard.suite, shard.mode, shardIndexOf(shard));
      if (!byRun.has(runId)) byRun.set(runId, { checkpoint: shard.checkpoint, suite: shard.suite, mode: shard.mode, runId, arraySize: shard.arraySize });
    }
  }
  return [...byRun.values()].sort((a, b) => cmp(a.checkpoint, b.checkpoint) || cmp(a.suite, b.suite) || cmp(a.mode, b.mode) || cmp(a.runId, b.runId));
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
