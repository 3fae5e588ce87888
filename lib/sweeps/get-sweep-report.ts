import type { JudgeSummary } from '../harness/eval/criterion-scores.ts';
import type { HarnessMode } from '../harness/task/harness-mode.ts';
import type { Ports } from '../ports/ports.ts';
import type { RecordItem } from '../ports/records.ts';
import { getSuite } from '../registry/get-suite.ts';
import { listSweepCells } from './list-suite-cells.ts';
import { comparisonRecord, shardPartRecord, sweepExecutionRecord } from './record-codecs.ts';
import { sweepKeys } from './record-keys.ts';
import { toResult } from './record-views.ts';
import type { Comparison, SweepReport } from './schemas.ts';
import { findSweep } from './sweep-record.ts';
import { NotFoundError } from '../errors.ts';
import { SAMPLE_RULES } from '../shared/statistics/index.ts';

/** The minimum-sample rules every report carries, so a reader sees why a verdict or a saturation is (not) there. */
const RULES = { verdict: SAMPLE_RULES.sweepVerdict, saturation: SAMPLE_RULES.saturation };

/** A cell's judge-graded attempts: mean rubric score and per-criterion pass rates (`taskId:criterionId`). */
export interface JudgedCell {
  checkpoint: string;
  suite: string;
  mode: HarnessMode;
  judge: JudgeSummary;
}

/** The sweep report, with the judge-graded cells' per-criterion scores when the sweep had judge-graded tasks. */
export type SweepReportWithJudges = SweepReport & { judged?: JudgedCell[] };

async function drain(ports: Pick<Ports, 'records'>, partition: string, beginsWith: string): Promise<RecordItem[]> {
  const out: RecordItem[] = [];
  let cursor: string | undefined;
  do {
    const page = await ports.records.query({ partition, sort: { beginsWith }, limit: 1000, ...(cursor ? { cursor } : {}) });
    out.push(...page.items);
    cursor = page.cursor;
  } while (cursor);
  return out;
}

/**
 * Everything about one sweep, for `GET /v1/sweeps/{id}` and `flywheel sweep report`: the sweep record, its execution
 * (when a workflows port is at hand), a result per checkpoint × suite × mode with its CI, the failed shards, the
 * comparisons with the incumbent (each with its rule), the suites this sweep saturated, and the minimum-sample rules.
 * A sweep started but not validated yet (or refused by validation) is reported as `requested`, from the request
 * recorded when it was started, with its execution, so the execution's error says what was wrong. `Flywheel.NotFoundError` for an id never started.
 *
 * @example
 * const report = await getSweepReport(ports, 'nightly-2026-12-02');
 * for (const r of report.results) console.log(r.checkpoint, r.suite, r.mode, r.score, r.ci);
 * for (const j of report.judged ?? []) console.log(j.suite, j.mode, j.judge.meanScore, j.judge.criteria);
 */
export async function getSweepReport(ports: Pick<Ports, 'records' | 'workflows'>, sweepId: string, options: { executionId?: string } = {}): Promise<SweepReportWithJudges> {
  const executionKey = sweepKeys.execution(sweepId);
  const started = sweepExecutionRecord.decodeIfPresent(await ports.records.get(executionKey.pk, executionKey.sk));
  const executionId = options.executionId ?? started?.executionId;
  const execution = await describeExecution(ports, executionId);
  const sweep = await findSweep(ports.records, sweepId);
  if (!sweep) {
    const request = started?.input;
    if (!request) throw new NotFoundError(`No sweep ${sweepId}`);
    return {
      sweep: {
        sweepId,
        status: 'requested',
        trigger: request.trigger,
        requestedAt: request.requestedAt,
        ...(request.requestedBy ? { requestedBy: request.requestedBy } : {}),
        checkpoints: request.checkpoints ?? [],
        // Versions are resolved by validate-sweep: none yet.
        suites: (request.suites ?? []).map((id) => ({ id })),
        modes: request.modes ?? [],
        ...(request.attemptsPerTask !== undefined ? { attemptsPerTask: request.attemptsPerTask } : {}),
      },
      ...(execution ? { execution } : {}),
      failedShards: [],
      results: [],
      comparisons: [],
      saturated: [],
      rules: RULES,
    };
  }
  const cells = await listSweepCells(ports.records, sweepId);
  const parts = (await drain(ports, sweepKeys.resultPartition(sweepId), sweepKeys.allShardPartsPrefix)).map(shardPartRecord.decode);
  const comparisons = (await drain(ports, sweepKeys.sweep(sweepId).pk, sweepKeys.comparisonPrefix)).map((item): Comparison => {
    const { kind: _kind, sweepId: _sweepId, ...comparison } = comparisonRecord.decode(item);
    return comparison;
  });
  const saturated: SweepReport['saturated'] = [];
  for (const ref of sweep.suites) {
    const suite = await getSuite(ports.records, ref.id).catch(() => undefined);
    if (suite?.status === 'saturated' && suite.saturatedBySweep === sweepId && suite.best) {
      saturated.push({ suite: ref.id, score: suite.best.score, checkpoint: suite.best.checkpoint, ...(suite.usefulLifeDays !== undefined ? { usefulLifeDays: suite.usefulLifeDays } : {}) });
    }
  }
  const order = (c: { checkpoint: string; suite: string; mode: string }) => [sweep.suites.findIndex((s) => s.id === c.suite), sweep.checkpoints.indexOf(c.checkpoint), c.mode === 'strict' ? 0 : 1];
  const cmp = (a: number[], b: number[]) => a[0]! - b[0]! || a[1]! - b[1]! || a[2]! - b[2]!;
  const judged = cells
    .flatMap((c): JudgedCell[] => (c.judge ? [{ checkpoint: c.checkpoint, suite: c.suite, mode: c.mode, judge: c.judge }] : []))
    .sort((a, b) => cmp(order(a), order(b)));
  return {
    sweep: {
      sweepId: sweep.sweepId,
      status: sweep.status,
      trigger: sweep.trigger,
      requestedAt: sweep.requestedAt,
      ...(sweep.requestedBy ? { requestedBy: sweep.requestedBy } : {}),
      checkpoints: sweep.checkpoints,
      suites: sweep.suites,
      modes: sweep.modes,
      attemptsPerTask: sweep.attemptsPerTask,
      ...(sweep.shardCount !== undefined ? { shardCount: sweep.shardCount } : {}),
      ...(sweep.succeededShards !== undefined ? { succeededShards: sweep.succeededShards } : {}),
      ...(sweep.failedShards !== undefined ? { failedShards: sweep.failedShards } : {}),
      ...(sweep.finishedAt ? { finishedAt: sweep.finishedAt } : {}),
    },
    ...(execution ? { execution } : {}),
    failedShards: parts.filter((p) => p.status === 'failed').map((p) => ({ shardId: p.shardId, checkpoint: p.checkpoint, suite: p.suite, mode: p.mode, error: p.error ?? 'error', ...(p.reason ? { reason: p.reason } : {}) })),
    results: cells.map(toResult).sort((a, b) => cmp(order(a), order(b))),
    comparisons: comparisons.sort((a, b) => cmp(order(a), order(b))),
    saturated,
    rules: RULES,
    ...(judged.length > 0 ? { judged } : {}),
  };
}

/** The execution as the workflows port describes it, when there is a port and an id (and it still exists). */
async function describeExecution(ports: Pick<Ports, 'workflows'>, executionId: string | undefined): Promise<SweepReport['execution']> {
  if (!ports.workflows || !executionId) return undefined;
  const e = await ports.workflows.describe(executionId).catch(() => undefined);
  return e ? { executionId: e.executionId, status: e.status, ...(e.error ? { error: e.error } : {}), ...(e.cause ? { cause: e.cause.slice(0, 2000) } : {}) } : undefined;
}
