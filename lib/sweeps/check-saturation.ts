import type { SweepSettings } from '../config/stages.ts';
import { raiseNotice, type NoticeDeliveryOptions } from '../people/notices/raise-notice.ts';
import { getSuite } from '../registry/get-suite.ts';
import { saturationNoticeKey } from '../registry/retire-suite.ts';
import { updateSuite } from '../registry/update-suite.ts';
import { suiteBestPointRecord } from '../registry/record-codecs.ts';
import type { Suite } from '../registry/schemas.ts';
import { listSweepCells } from './list-suite-cells.ts';
import { getSweep } from './sweep-record.ts';
import type { SaturationCheck, SweepIdInput, SweepStepPorts } from './workflow/sweep-steps.ts';
import { formatPercent } from '../format-percent.ts';
import { MIN_TASKS_FOR_SATURATION } from '../shared/statistics/index.ts';

/** Published when a suite is marked saturated (EventBridge detail-type), with a stable id per suite version. */
export const SUITE_SATURATED = 'suite.saturated';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface CheckSaturationOptions {
  settings: Pick<SweepSettings, 'saturationThreshold' | 'saturationMinTasks'>;
  notify?: NoticeDeliveryOptions;
}

/**
 * Step `check-saturation`: per suite of the sweep, the best strict score of this sweep (over cells whose every shard
 * was aggregated: a cell that lost shards scored a subset of the suite) is recorded as a point of the
 * suite's best-score series (`SUITE#<id>` / `BEST#<at>#<sweepId>`), and the suite's all-time best is kept on the
 * suite. A suite still active whose best strict score reaches its threshold (the suite's own, else the stage's
 * `sweeps.saturationThreshold`, default 0.9) over at least MIN_TASKS_FOR_SATURATION scored tasks (a perfect score on
 * a handful of tasks says nothing about the suite: `SAMPLE_RULES.saturation`) is marked saturated: `saturatedAt`, its
 * useful life (days from `createdAt`), `suite.saturated` published and people asked to decide (a `decision` notice
 * with a `retire` button, `retire-suite`), proposing to retire it or forge harder tasks.
 *
 * Idempotent: points and the suite record are overwrites; the alert goes out before the suite is marked, so a crash
 * in between repeats the alert (same event id) rather than losing it, and a suite this sweep already marked is
 * reported again in `newlySaturated` without a second alert.
 *
 * @example
 * const s = await checkSaturation(ports, { sweepId }, { settings: { saturationThreshold: 0.9 } }); // s.newlySaturated
 */
export async function checkSaturation(ports: SweepStepPorts, input: SweepIdInput, options: CheckSaturationOptions): Promise<SaturationCheck> {
  const sweep = await getSweep(ports.records, input.sweepId);
  // Only complete cells count: a score over the shards that happened to succeed is a score on a subset of the suite.
  const cells = (await listSweepCells(ports.records, sweep.sweepId)).filter(
    (c) => c.mode === 'strict' && c.score !== null && c.shardsFailed === 0 && c.shardsAggregated === c.shards,
  );
  const newlySaturated: string[] = [];
  for (const ref of sweep.suites) {
    const suite = await getSuite(ports.records, ref.id);
    if (suite.version !== ref.version) continue;
    const mine = cells.filter((c) => c.suite === ref.id && c.suiteVersion === ref.version).sort((a, b) => b.score! - a.score! || a.checkpoint.localeCompare(b.checkpoint));
    const best = mine[0];
    if (!best) continue;
    const point = { score: best.score!, checkpoint: best.checkpoint, sweepId: sweep.sweepId, at: sweep.requestedAt };
    await ports.records.put(suiteBestPointRecord.encode({ kind: 'suite-best', suite: ref.id, suiteVersion: ref.version, ...point }));
    let updated: Suite = suite;
    if (!suite.best || point.score > suite.best.score) updated = { ...updated, best: point };
    const threshold = suite.saturationThreshold ?? options.settings.saturationThreshold;
    const alreadyMine = suite.status === 'saturated' && suite.saturatedBySweep === sweep.sweepId;
    if (alreadyMine) newlySaturated.push(ref.id);
    else if (suite.status === 'active' && point.score >= threshold && best.n >= (options.settings.saturationMinTasks ?? MIN_TASKS_FOR_SATURATION)) {
      // Retired (or re-versioned) since it was read: its owner decided already; no alert about the old version.
      const fresh = await getSuite(ports.records, ref.id);
      if (fresh.status !== 'active' || fresh.version !== ref.version) continue;
      const saturatedAt = ports.now().toISOString();
      const usefulLifeDays = Math.round(((Date.parse(saturatedAt) - Date.parse(suite.createdAt)) / DAY_MS) * 100) / 100;
      const detail = { suite: ref.id, version: ref.version, score: point.score, threshold, checkpoint: best.checkpoint, sweepId: sweep.sweepId, createdAt: suite.createdAt, saturatedAt, usefulLifeDays };
      await ports.events.publish([{ type: SUITE_SATURATED, id: `${SUITE_SATURATED}:${ref.id}:v${ref.version}`, detail }]);
      await raiseNotice(
        ports,
        {
          dedupKey: saturationNoticeKey(ref.id, ref.version),
          kind: 'decision',
          severity: 'alert',
          title: `Suite ${ref.id} v${ref.version} is saturated: best strict score ${pct(point.score)} ≥ ${pct(threshold)}`,
          text:
            `${best.checkpoint} scored ${pct(point.score)} in strict mode in sweep ${sweep.sweepId}. ` +
            `The suite no longer separates checkpoints. Proposed: retire it (status retired) or forge harder tasks for a version ${ref.version + 1}. ` +
            `Useful life: ${usefulLifeDays} days (created ${suite.createdAt}).`,
          source: { capability: 'sweeps', runKind: 'sweep', runId: sweep.sweepId },
          link: `/suites/${encodeURIComponent(ref.id)}`,
          fields: { suite: `${ref.id} v${ref.version}`, best: pct(point.score), threshold: pct(threshold), 'useful life (days)': usefulLifeDays },
          actions: [{ id: 'retire', label: `Retire ${ref.id}`.slice(0, 75), style: 'danger', operation: { kind: 'retire-suite', suiteId: ref.id } }],
        },
        options.notify,
      );
      updated = { ...updated, status: 'saturated', saturatedAt, usefulLifeDays, saturatedBySweep: sweep.sweepId };
      newlySaturated.push(ref.id);
    }
    if (updated !== suite) {
      // Only what this step changed, over the record as it is now; a suite retired (or re-versioned) meanwhile keeps
      // what its owner did (updateSuite writes over the very item it read, or reads again).
      const read = new Map<string, unknown>(Object.entries(suite));
      const changes = Object.fromEntries(Object.entries(updated).filter(([k, v]) => read.get(k) !== v));
      await updateSuite(ports.records, ref.id, (current) => (current.status === 'retired' || current.version !== ref.version ? undefined : { ...current, ...changes }));
    }
  }
  return { newlySaturated, threshold: options.settings.saturationThreshold };
}

const pct = formatPercent;
