/**
 * A sweep's heartbeat (`lib/people/heartbeats/`): after its plan and after each shard done, with its progress (shards
 * done / planned), so a sweep whose shards stop finishing is reported stalled after the stage's `sweep` window. It
 * never fails the step.
 */
import { beatQuietly } from '../people/heartbeats/record-heartbeat.ts';
import { sweepKeys } from './record-keys.ts';
import { getSweep } from './sweep-record.ts';
import type { SweepStepPorts } from './workflow/sweep-steps.ts';

/**
 * Beats for the sweep, then hands back the step's result unchanged.
 *
 * @example
 * return beatSweep(ports, sweepId, `shard ${shard.shardId} aggregated`, await aggregateShard(ports, input));
 */
export async function beatSweep<T>(ports: SweepStepPorts, sweepId: string, stage: string, result: T): Promise<T> {
  try {
    const sweep = await getSweep(ports.records, sweepId);
    let done = 0;
    let cursor: string | undefined;
    do {
      const page = await ports.records.query({ partition: sweepKeys.resultPartition(sweepId), sort: { beginsWith: sweepKeys.allShardPartsPrefix }, limit: 1000, ...(cursor ? { cursor } : {}) });
      done += page.items.length;
      cursor = page.cursor;
    } while (cursor);
    const total = sweep.shardCount ?? done;
    await beatQuietly(ports.records, { runKind: 'sweep', runId: sweepId, stage: stage.slice(0, 128), progress: { done, total } }, ports.now());
  } catch {
    // No sweep record (a step driven alone in a test) or a read that failed: the watch waits for the next beat.
  }
  return result;
}
