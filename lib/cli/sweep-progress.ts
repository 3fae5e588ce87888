import type { SweepReport } from '../sweeps/schemas.ts';
import type { ShardProgress, SweepProgress } from '../sweeps/sweep-progress-schema.ts';
import { table } from './table.ts';

/** Sweep states after which nothing changes. */
const ENDED = new Set(['succeeded', 'partial', 'failed']);

/** Whether the sweep has ended: its record says so, or its execution stopped (a refused request never gets a record). */
export function sweepEnded(report: SweepReport): boolean {
  return ENDED.has(report.sweep.status) || (report.execution !== undefined && report.execution.status !== 'RUNNING');
}

/** Whether an ended sweep failed (the exit code of `--watch`): failed or partial, or its execution did not succeed. */
export function sweepFailed(report: SweepReport): boolean {
  if (report.sweep.status === 'succeeded') return false;
  if (report.sweep.status === 'failed' || report.sweep.status === 'partial') return true;
  return report.execution !== undefined && report.execution.status !== 'RUNNING' && report.execution.status !== 'SUCCEEDED';
}

/**
 * Seconds as a person reads a duration.
 *
 * @example
 * formatElapsed(65); // '1m 05s'
 */
export function formatElapsed(seconds: number | undefined): string {
  if (seconds === undefined) return '';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

/** The sweep's one-line state: status, shards done, results so far. */
export function sweepHeadline(report: SweepReport, progress?: SweepProgress): string {
  const s = report.sweep;
  const shards = progress?.shards ?? [];
  const ended = shards.filter((x) => x.status === 'succeeded' || x.status === 'failed').length;
  const planned = s.shardCount ?? (progress?.planned ? shards.length : undefined);
  const execution = report.execution && report.execution.status !== 'RUNNING' && s.status === 'requested' ? ` (execution ${report.execution.status}${report.execution.error ? `: ${report.execution.error}` : ''})` : '';
  return `sweep ${s.sweepId}: ${s.status}${execution}; shards ${ended}/${planned ?? '?'} done; results ${report.results.length}`;
}

function progressBar(done: number, total: number, width = 10): string {
  const filled = total > 0 ? Math.round((done / total) * width) : 0;
  return `${'#'.repeat(filled)}${'.'.repeat(width - filled)}`;
}

/** One row per shard: shard, checkpoint, suite, mode, status, attempts done/total, elapsed. */
export function formatShardTable(shards: ShardProgress[]): string {
  return table(
    ['shard', 'checkpoint', 'suite', 'mode', 'status', 'tasks done', 'elapsed'],
    shards.map((s) => [s.shardId, s.checkpoint, s.suite, s.mode, s.status, `${progressBar(s.done, s.total)} ${s.done}/${s.total}`, formatElapsed(s.elapsedSeconds)]),
  );
}

/** The whole picture `--watch` redraws on a terminal. */
export function formatSweepProgress(report: SweepReport, progress: SweepProgress): string {
  const head = `${sweepHeadline(report, progress)}\n`;
  if (!progress.planned) return `${head}not planned yet: waiting for its shards\n`;
  const failed = progress.shards.filter((s) => s.error).map((s) => `  ${s.shardId}: ${s.error}\n`);
  return `${head}${formatShardTable(progress.shards)}${failed.length ? `failed shards:\n${failed.join('')}` : ''}`;
}

/**
 * The plain lines `--watch` prints when stdout is not a terminal: one per shard whose status or count changed since
 * `before` (so a log reads as a history), each `shard status done/total elapsed`.
 */
export function shardChangeLines(before: Map<string, string>, progress: SweepProgress): string[] {
  const out: string[] = [];
  for (const s of progress.shards) {
    const state = `${s.status} ${s.done}/${s.total}`;
    if (before.get(s.shardId) === state) continue;
    before.set(s.shardId, state);
    out.push(`${s.shardId} ${s.checkpoint} ${s.suite} ${s.mode}: ${state}${s.elapsedSeconds !== undefined ? ` ${formatElapsed(s.elapsedSeconds)}` : ''}${s.error ? ` (${s.error})` : ''}`);
  }
  return out;
}

/**
 * The next poll interval: back to `min` after a change, else 1.5× the last, at most `max`.
 *
 * @example
 * nextPollMs(500, false); // 750
 */
export function nextPollMs(last: number, changed: boolean, min = 500, max = 5000): number {
  return changed ? min : Math.min(max, Math.round(last * 1.5));
}
