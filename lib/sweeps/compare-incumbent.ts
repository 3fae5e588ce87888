import { findCheckpoint } from '../registry/get-checkpoint.ts';
import { getIncumbent } from '../registry/incumbent.ts';
import { MIN_TASKS_FOR_VERDICT } from '../shared/statistics/index.ts';
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

/** The cell to beat on a suite × mode, and why it is the one. */
export interface IncumbentCell {
  cell: CellRecord;
  /** `registry`: the registry names it (an experiment shipped it); `best-active`: the best active of earlier sweeps. */
  source: 'registry' | 'best-active';
}

/**
 * The incumbent of a suite × mode going into this sweep. When the registry names an incumbent (`getIncumbent`: the
 * checkpoint an experiment shipped) and it has a scored cell on this suite version, that is the cell to beat: this
 * sweep's when it was swept here (same harness, same run), else its latest of earlier sweeps. Otherwise, among active
 * (not retired) checkpoints scored on the same suite version by earlier sweeps, each checkpoint's latest score; the
 * best of them is the checkpoint to beat. On a suite's first sweep it is the best of this sweep. Ties go to the more
 * recent result, then the smaller id. Later sweeps are ignored, so a replay answers the same (as long as the
 * registry's incumbent did not change meanwhile).
 *
 * @example
 * const found = await findIncumbent(ports, sweep, { id: 'suite-a', version: 3 }, 'strict'); // { cell, source: 'registry' }
 */
export async function findIncumbent(
  ports: Pick<SweepStepPorts, 'records'>,
  sweep: Pick<SweepRecordBody, 'sweepId' | 'requestedAt'>,
  suite: { id: string; version: number },
  mode: HarnessMode,
): Promise<IncumbentCell | undefined> {
  const scored = (await listSuiteCells(ports.records, suite.id, mode)).filter((c) => c.suiteVersion === suite.version && c.score !== null);
  const mine = scored.filter((c) => c.sweepId === sweep.sweepId);
  const earlier = scored.filter((c) => c.at < sweep.requestedAt && c.sweepId !== sweep.sweepId);
  const newest = (cells: CellRecord[]) => cells.reduce<CellRecord | undefined>((best, c) => (!best || c.at > best.at || (c.at === best.at && c.sweepId > best.sweepId) ? c : best), undefined);
  const named = await getIncumbent(ports.records);
  if (named) {
    const cell = newest(mine.filter((c) => c.checkpoint === named.checkpoint)) ?? newest(earlier.filter((c) => c.checkpoint === named.checkpoint));
    if (cell) return { cell, source: 'registry' };
  }
  const pool = earlier.length > 0 ? earlier : mine;
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
  return active[0] ? { cell: active[0], source: 'best-active' } : undefined;
}

/**
 * Step `compare-incumbent`: first rebuilds every cell of the sweep from its shard parts (the Map's shards of one cell
 * may have aggregated at once), then, per suite × mode, compares each checkpoint of the sweep with the incumbent:
 * difference of scores with a 95% CI (paired over common tasks when it can be, clamped to [−1, 1]), `better` /
 * `worse` when the CI excludes 0 and the difference rests on at least MIN_TASKS_FOR_VERDICT tasks, `too-few-tasks`
 * below that; each comparison carries its rule in words. Writes one `COMPARE#…` record per checkpoint × suite × mode
 * under `SWEEP#<id>` (overwrites: idempotent).
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
      const found = await findIncumbent(ports, sweep, suite, mode);
      const incumbent = found?.cell;
      const incumbentTasks = incumbent ? await cellTallies(ports.blobs, incumbent) : [];
      for (const checkpoint of sweep.checkpoints) {
        const cell = cells.find((c) => c.checkpoint === checkpoint && c.suite === suite.id && c.mode === mode);
        const c = compareCell(checkpoint, suite.id, mode, cell, found, cell ? await cellTallies(ports.blobs, cell) : [], incumbentTasks);
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

function compareCell(
  checkpoint: string,
  suite: string,
  mode: HarnessMode,
  cell: CellRecord | undefined,
  found: IncumbentCell | undefined,
  cellTasks: TaskTally[],
  incumbentTasks: TaskTally[],
): Comparison {
  const incumbent = found?.cell;
  const base = { checkpoint, suite, mode, score: cell?.score ?? null, incumbentScore: incumbent?.score ?? null, incumbent: incumbent?.checkpoint ?? null, ...(found ? { incumbentSource: found.source } : {}) };
  const chosen = found?.source === 'registry' ? "the registry's incumbent (shipped by an experiment)" : 'the best active checkpoint of earlier sweeps on this suite version';
  if (!cell || cell.score === null) return { ...base, difference: null, ci: null, paired: false, n: 0, verdict: 'not-scored', rule: 'not-scored: this checkpoint has no scored task on the suite in this mode' };
  if (!incumbent) return { ...base, difference: null, ci: null, paired: false, n: cell.n, verdict: 'no-incumbent', rule: 'no-incumbent: no other scored active checkpoint on this suite version' };
  if (incumbent.checkpoint === checkpoint) return { ...base, difference: null, ci: null, paired: false, n: cell.n, verdict: 'incumbent', rule: `incumbent: ${chosen}` };
  const d = differenceOf(cellTasks, incumbentTasks);
  if (!d) return { ...base, difference: null, ci: null, paired: false, n: 0, verdict: 'not-scored', rule: 'not-scored: no task scored on both sides' };
  const over = d.paired ? `paired over ${d.n} common task${d.n === 1 ? '' : 's'}` : `unpaired, ${d.n} task${d.n === 1 ? '' : 's'} in the smaller cell`;
  if (d.n < MIN_TASKS_FOR_VERDICT) {
    return { ...base, difference: d.difference, ci: d.ci, paired: d.paired, n: d.n, verdict: 'too-few-tasks', rule: `too-few-tasks: the difference rests on ${d.n} task${d.n === 1 ? '' : 's'} (${over}); better / worse need ≥ ${MIN_TASKS_FOR_VERDICT}` };
  }
  const verdict = d.ci.low > 0 ? 'better' : d.ci.high < 0 ? 'worse' : 'no-difference';
  const where = verdict === 'better' ? 'lies wholly above 0' : verdict === 'worse' ? 'lies wholly below 0' : 'includes 0';
  return { ...base, difference: d.difference, ci: d.ci, paired: d.paired, n: d.n, verdict, rule: `${verdict}: the 95% interval of the difference (${over}, ≥ ${MIN_TASKS_FOR_VERDICT} needed) ${where}; vs ${chosen}` };
}
