import { findCheckpoint } from '../registry/get-checkpoint.ts';
import type { HarnessMode } from '../harness/task/harness-mode.ts';
import { cellTallies } from './aggregate-cell.ts';
import { recomputeCells } from './aggregate-shard.ts';
import { listSuiteCells, listSweepCells } from './list-suite-cells.ts';
import { comparisonRecord, type CellRecord, type TaskTally } from './record-codecs.ts';
import { sweepKeys } from './record-keys.ts';
import { differenceOf } from './score-interval.ts';
import type { Comparison, SweepRecordBody } from './schemas.ts';
import { getSweep } from './sweep-record.ts';
import type { IncumbentComparison, SweepIdInput, SweepStepPorts } from './workflow/sweep-steps.ts';

/**
 * The incumbent of a suite × mode going into this sweep: among active (not retired) checkpoints scored on the same
 * suite version by earlier sweeps, each checkpoint's latest score; the best of them is the checkpoint to beat. On a
 * suite's first sweep it is the best of this sweep. Ties go to the more recent result, then the smaller id. Later
 * sweeps are ignored, so a replay answers the same.
 */
export async function findIncumbent(
  ports: Pick<SweepStepPorts, 'records'>,
  sweep: Pick<SweepRecordBody, 'sweepId' | 'requestedAt'>,
  suite: { id: string; version: number },
  mode: HarnessMode,
): Promise<CellRecord | undefined> {
  const scored = (await listSuiteCells(ports.records, suite.id, mode)).filter((c) => c.suiteVersion === suite.version && c.score !== null);
  const earlier = scored.filter((c) => c.at < sweep.requestedAt && c.sweepId !== sweep.sweepId);
  const pool = earlier.length > 0 ? earlier : scored.filter((c) => c.sweepId === sweep.sweepId);
  const latest = new Map<string, CellRecord>();
  for (const c of pool) {
    const prev = latest.get(c.checkpoint);
    if (!prev || c.at > prev.at || (c.at === prev.at && c.sweepId > prev.sweepId)) latest.set(c.checkpoint, c);
  }
  const active: CellRecord[] = [];
  for (const c of latest.values()) {
    const cp = await findCheckpoint(ports.records, c.checkpoint);
    if (cp && cp.status === 'active') active.push(c);
  }
  active.sort((a, b) => b.score! - a.score! || b.at.localeCompare(a.at) || a.checkpoint.localeCompare(b.checkpoint));
  return active[0];
}

/**
 * Step `compare-incumbent`: first rebuilds every cell of the sweep from its shard parts (the Map's shards of one cell
 * may have aggregated at once), then, per suite × mode, compares each checkpoint of the sweep with the incumbent:
 * difference of scores with a 95% CI (paired over common tasks when it can be), `better` / `worse` when the CI
 * excludes 0. Writes one `COMPARE#…` record per checkpoint × suite × mode under `SWEEP#<id>` (overwrites: idempotent).
 *
 * @example
 * const c = await compareWithIncumbent(ports, { sweepId }); // { comparisons: 6, regressions: 1, improvements: 0, … }
 */
export async function compareWithIncumbent(ports: SweepStepPorts, input: SweepIdInput): Promise<IncumbentComparison> {
  await recomputeCells(ports, input.sweepId);
  const sweep = await getSweep(ports.records, input.sweepId);
  const cells = await listSweepCells(ports.records, input.sweepId);
  let regressions = 0;
  let improvements = 0;
  let comparisons = 0;
  for (const suite of sweep.suites) {
    for (const mode of sweep.modes) {
      const incumbent = await findIncumbent(ports, sweep, suite, mode);
      for (const checkpoint of sweep.checkpoints) {
        const cell = cells.find((c) => c.checkpoint === checkpoint && c.suite === suite.id && c.mode === mode);
        const c = compareCell(checkpoint, suite.id, mode, cell, incumbent, cell ? await cellTallies(ports.blobs, cell) : [], incumbent ? await cellTallies(ports.blobs, incumbent) : []);
        if (c.verdict === 'worse') regressions++;
        if (c.verdict === 'better') improvements++;
        comparisons++;
        await ports.records.put(comparisonRecord.encode({ kind: 'sweep-comparison', sweepId: sweep.sweepId, ...c }));
      }
    }
  }
  const key = sweepKeys.comparison(sweep.sweepId, '', '', 'strict');
  return { comparisonKey: `${key.pk}/${sweepKeys.comparisonPrefix}`, comparisons, regressions, improvements };
}

function compareCell(checkpoint: string, suite: string, mode: HarnessMode, cell: CellRecord | undefined, incumbent: CellRecord | undefined, cellTasks: TaskTally[], incumbentTasks: TaskTally[]): Comparison {
  const base = { checkpoint, suite, mode, score: cell?.score ?? null, incumbentScore: incumbent?.score ?? null };
  if (!cell || cell.score === null) return { ...base, incumbent: incumbent?.checkpoint ?? null, difference: null, ci: null, paired: false, n: 0, verdict: 'not-scored' };
  if (!incumbent || incumbent.checkpoint === checkpoint) {
    return { ...base, incumbent: incumbent?.checkpoint ?? null, difference: null, ci: null, paired: false, n: cell.n, verdict: incumbent ? 'incumbent' : 'no-incumbent' };
  }
  const d = differenceOf(cellTasks, incumbentTasks);
  if (!d) return { ...base, incumbent: incumbent.checkpoint, difference: null, ci: null, paired: false, n: 0, verdict: 'not-scored' };
  const verdict = d.ci.low > 0 ? 'better' : d.ci.high < 0 ? 'worse' : 'no-difference';
  return { ...base, incumbent: incumbent.checkpoint, difference: d.difference, ci: d.ci, paired: d.paired, n: d.n, verdict };
}
