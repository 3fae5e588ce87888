import { beatQuietly } from '../people/heartbeats/record-heartbeat.ts';
import { raiseNotice, type NoticeDeliveryOptions } from '../people/notices/raise-notice.ts';
import { listSweepCells } from './list-suite-cells.ts';
import { getSweep, putSweep } from './sweep-record.ts';
import type { NotifyInput, SweepNotice, SweepStepPorts } from './workflow/sweep-steps.ts';

/** Published when a sweep ends (EventBridge detail-type), id `sweep.finished:<sweepId>:<succeeded>-<failed>`. */
export const SWEEP_FINISHED = 'sweep.finished';

/**
 * Step `notify`, the last: counts the shard outcomes, marks the sweep `succeeded` (every shard), `partial` (some
 * failed) or `failed` (all failed), publishes `sweep.finished` and tells people: a summary line per checkpoint × suite
 * × mode, the failed shards (a sweep that lost shards is a `failure` notice: its cause and the link), regressions
 * against the incumbent and newly saturated suites. A replay rewrites the same record and raises the same notice (its
 * dedup key is the stable id), which folds into the first: people are told once. The sweep's heartbeat watch ends.
 *
 * @example
 * const notice = await notifySweep(ports, { sweepId, shards, comparison, saturation }, { webhookUrl });
 */
export async function notifySweep(ports: SweepStepPorts, input: NotifyInput, notify?: NoticeDeliveryOptions): Promise<SweepNotice> {
  const sweep = await getSweep(ports.records, input.sweepId);
  const failed = input.shards.filter((s) => s.status === 'failed');
  const succeeded = input.shards.length - failed.length;
  const status: SweepNotice['status'] = failed.length === 0 ? 'succeeded' : succeeded === 0 ? 'failed' : 'partial';
  // A replay of the same end keeps its time; a retry of the failed shards that changed the outcome is a new end.
  const sameEnd = sweep.finishedAt !== undefined && sweep.status === status && sweep.failedShards === failed.length && sweep.succeededShards === succeeded;
  await putSweep(ports.records, { ...sweep, status, finishedAt: sameEnd ? sweep.finishedAt! : ports.now().toISOString(), succeededShards: succeeded, failedShards: failed.length });
  // The same end publishes the same id (a replay is deduplicated); another end of a retried sweep is news.
  const noticeId = `${SWEEP_FINISHED}:${sweep.sweepId}:${succeeded}-${failed.length}`;
  const cells = (await listSweepCells(ports.records, sweep.sweepId)).sort((a, b) => a.suite.localeCompare(b.suite) || a.checkpoint.localeCompare(b.checkpoint) || a.mode.localeCompare(b.mode));
  const lines = cells.map((c) => `• ${c.checkpoint} on ${c.suite} (${c.mode}): ${c.score === null ? 'not scored' : `${(c.score * 100).toFixed(1)}% [${(c.ci!.low * 100).toFixed(1)}–${(c.ci!.high * 100).toFixed(1)}], n=${c.n}`}`);
  if (failed.length > 0) lines.push(`Failed shards: ${failed.map((f) => `${f.shardId} (${f.error ?? 'error'})`).join(', ')}`);
  if (input.comparison.regressions > 0) lines.push(`${input.comparison.regressions} regression(s) against the incumbent`);
  if (input.saturation.newlySaturated.length > 0) lines.push(`Saturated: ${input.saturation.newlySaturated.join(', ')}`);
  await ports.events.publish([
    {
      type: SWEEP_FINISHED,
      id: noticeId,
      detail: { sweepId: sweep.sweepId, status, succeededShards: succeeded, failedShards: failed.length, regressions: input.comparison.regressions, improvements: input.comparison.improvements, newlySaturated: input.saturation.newlySaturated },
    },
  ]);
  await raiseNotice(
    ports,
    {
      dedupKey: noticeId,
      kind: status === 'succeeded' ? 'info' : 'failure',
      severity: status === 'succeeded' && input.comparison.regressions === 0 ? 'info' : status === 'failed' ? 'alert' : 'warning',
      title: `Sweep ${sweep.sweepId} ${status}: ${succeeded}/${input.shards.length} shards`,
      text: (lines.join('\n') || 'No results.').slice(0, 3000),
      source: { capability: 'sweeps', runKind: 'sweep', runId: sweep.sweepId },
      link: `/attempts?sweep=${encodeURIComponent(sweep.sweepId)}`,
      fields: { checkpoints: sweep.checkpoints.length, suites: sweep.suites.length, modes: sweep.modes.join(', '), regressions: input.comparison.regressions, improvements: input.comparison.improvements },
    },
    notify,
  );
  await beatQuietly(ports.records, { runKind: 'sweep', runId: sweep.sweepId, stage: 'notify', finished: true }, ports.now());
  return { sweepId: sweep.sweepId, status, succeededShards: succeeded, failedShards: failed.length };
}
