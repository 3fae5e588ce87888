/**
 * Per-criterion scores of judge-graded attempts in results: an eval run's per-task tallies, the compare-modes report
 * (per-criterion pass rates per mode), and a sweep's cells and report (driven through the local sweep steps).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AttemptRecord } from '../../lib/harness/attempt/attempt-record.ts';
import { listAttemptRecords } from '../../lib/harness/attempt/read-attempt-records.ts';
import { attemptRecord } from '../../lib/harness/attempt/record-codecs.ts';
import { compareRecords } from '../../lib/harness/eval/compare-modes.ts';
import { compareModesRecord } from '../../lib/harness/eval/record-codecs.ts';
import { summarizeAttempts } from '../../lib/harness/eval/run-eval.ts';
import type { Judgement } from '../../lib/judges/schemas.ts';
import { aggregateShard } from '../../lib/sweeps/aggregate-shard.ts';
import { getSweepReport } from '../../lib/sweeps/get-sweep-report.ts';
import { formatReportTable } from '../../lib/sweeps/report-table.ts';
import { readShardSpec } from '../../lib/sweeps/shard-spec.ts';
import { sweepStepHandlers } from '../../lib/sweeps/sweep-step-handlers.ts';
import { compareModesTable, summaryTable } from '../../lib/cli/eval.ts';
import { driveSweep } from '../sweeps/support/drive-sweep.ts';
import { rateScript } from '../sweeps/support/scripted-rollout.ts';
import { openSweepFixture, type SweepFixture } from '../sweeps/support/sweep-fixture.ts';

let fx: SweepFixture | undefined;
afterEach(() => {
  fx?.close();
  fx = undefined;
});

/** A judgement: c1 as given, c2 passed or voided. */
function judgement(c1: 'pass' | 'fail', c2Voided = false): Judgement {
  const criteria: Judgement['criteria'] = [
    { id: 'c1', verdict: c1, score: c1 === 'pass' ? 1 : 0, reason: 'r', evidence: [{ source: 'diff', quote: 'x' }] },
    c2Voided ? { id: 'c2', verdict: 'pass', reason: 'r', evidence: [], voided: 'no valid verdict after 3 call(s)' } : { id: 'c2', verdict: 'pass', score: 1, reason: 'r', evidence: [{ source: 'diff', quote: 'y' }] },
  ];
  const score = ((c1 === 'pass' ? 1 : 0) + (c2Voided ? 0 : 1)) / 2;
  return { judge: { name: 'rubric-judge', version: 'abc123abc123' }, criteria, score, calls: 1, usage: { promptTokens: 10, completionTokens: 5 }, latencyMs: 3, complete: !c2Voided };
}

function record(taskId: string, mode: 'strict' | 'lenient', n: number, j: Judgement | undefined): AttemptRecord {
  const usage = { promptTokens: 1, completionTokens: 1, cachedTokens: 0 };
  const passed = j ? j.score >= 1 : false;
  return {
    pk: 'EVAL#r',
    sk: `ATTEMPT#${taskId}#${mode}#${n}`,
    kind: 'eval-attempt',
    runId: 'r',
    attemptId: `r.${taskId}.${mode}.${n}`,
    taskId,
    suite: 's',
    mode,
    n,
    status: passed ? 'passed' : 'failed',
    usage,
    usageAllTries: usage,
    turns: 1,
    durationMs: 1,
    ...(j ? { grade: { passed, reasons: [], judgement: j } } : {}),
    model: 'm',
    tries: 1,
    history: [],
    startedAt: '2026-12-03T00:00:00.000Z',
    finishedAt: '2026-12-03T00:00:00.000Z',
  };
}

describe('per-criterion scores in results', () => {
  it('eval results carry each judged task’s mean score and criterion tallies; the record codec round-trips a judgement', () => {
    const records = [record('fm-1', 'strict', 0, judgement('pass')), record('fm-1', 'strict', 1, judgement('fail')), record('fm-1', 'strict', 2, judgement('pass', true)), record('calc', 'strict', 0, undefined)];
    expect(attemptRecord.decode(attemptRecord.encode(records[0]!)).grade?.['judgement']).toEqual(judgement('pass'));
    const now = new Date('2026-12-03T00:00:00Z');
    const results = summarizeAttempts(records, { runId: 'r', mode: 'strict', model: 'm', attemptsPerTask: 3, concurrency: 1, taskIds: ['fm-1', 'calc'], ran: 4, skipped: 0, startedAt: now, finishedAt: now });
    const fm = results.perTask.find((t) => t.taskId === 'fm-1')!;
    expect(fm.judgeScore).toBeCloseTo((1 + 0.5 + 0.5) / 3, 10);
    expect(fm.criteria).toEqual({
      c1: { judged: 3, passed: 2, failed: 1, notApplicable: 0, voided: 0, passRate: 2 / 3 },
      c2: { judged: 3, passed: 2, failed: 0, notApplicable: 0, voided: 1, passRate: 2 / 3 },
    });
    expect(results.perTask.find((t) => t.taskId === 'calc')!.criteria).toBeUndefined();
    expect(summaryTable(results)).toMatch(/fm-1: judge score 0\.67 · criteria c1 66\.7%, c2 66\.7% \(1 voided\)/);
  });

  it('compare-modes reports per-criterion pass rates per mode', () => {
    const records = [record('fm-1', 'strict', 0, judgement('fail')), record('fm-1', 'strict', 1, judgement('pass')), record('fm-1', 'lenient', 0, judgement('pass')), record('fm-1', 'lenient', 1, judgement('pass'))];
    const m = compareRecords(records, { runId: 'r', model: 'm', taskIds: ['fm-1'], attempts: 2, resamples: 100 });
    expect(m.strict.criteria!['fm-1:c1']).toMatchObject({ judged: 2, passed: 1, passRate: 0.5 });
    expect(m.lenient.criteria!['fm-1:c1']).toMatchObject({ judged: 2, passed: 2, passRate: 1 });
    const report = { version: 1 as const, runId: 'r', tasks: 1, attemptsPerTask: 2, models: [m], generatedAt: '2026-12-03T00:00:00.000Z' };
    expect(compareModesRecord.decode(compareModesRecord.encode({ kind: 'eval-compare-modes', ...report })).models[0]!.strict.criteria).toEqual(m.strict.criteria);
    expect(compareModesTable(report)).toMatch(/fm-1:c1\s+50\.0% of 2\s+100\.0% of 2/);
  });

  it('a sweep’s cells carry per-criterion means from their shards, and the report prints them', async () => {
    fx = openSweepFixture({ settings: { shardMaxTasks: 2 } });
    await fx.seed({ checkpoints: 1, suites: 1, tasks: 4 });
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    const input = { sweepId: 'sj', trigger: 'manual' as const, requestedAt: '2026-12-02T10:05:00.000Z', modes: ['strict' as const] };
    await driveSweep(steps, fx.ports, input, { script: rateScript(() => 0.5) });
    const plan = await steps['plan-shards'](fx.ports, { sweepId: 'sj' });
    // The harness graded these attempts with a judge: the first task's c1 fails, every other criterion passes.
    for (const shard of plan.shards) {
      const spec = await readShardSpec(fx.ports.blobs, shard.shardKey);
      for (let child = 0; child < spec.shardCount; child++) {
        const records = await listAttemptRecords(fx.ports.records, `${spec.runId}.shard-${child}`);
        const judged = records.map((r) => {
          const { pk: _pk, sk: _sk, ...fields } = record(r.taskId, 'strict', r.n, judgement(r.taskId === 't000' ? 'fail' : 'pass'));
          return attemptRecord.encode({ ...fields, runId: r.runId, attemptId: r.attemptId });
        });
        await fx.ports.records.putMany(judged);
      }
      await aggregateShard(fx.ports, { sweepId: 'sj', shard, job: { jobId: 'j', status: 'SUCCEEDED' } });
    }
    const report = await getSweepReport(fx.ports, 'sj');
    expect(report.judged).toHaveLength(1);
    const judge = report.judged![0]!.judge;
    expect(judge).toMatchObject({ attempts: 4, meanScore: (0.5 + 1 + 1 + 1) / 4 });
    expect(judge.criteria['t000:c1']).toMatchObject({ judged: 1, passed: 0, passRate: 0 });
    expect(judge.criteria['t003:c2']).toMatchObject({ judged: 1, passed: 1, passRate: 1 });
    const text = formatReportTable(report);
    expect(text).toMatch(/rubric criteria — suite-0 ck-0 strict: mean judge score 0\.88 over 4 attempt\(s\)/);
    expect(text).toMatch(/t000:c1: 0\.0% passed of 1/);
  });
});
