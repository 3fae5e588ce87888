import { afterEach, describe, expect, it } from 'vitest';
import { listResults } from '../../lib/registry/list-results.ts';
import { sweepKeys } from '../../lib/sweeps/record-keys.ts';
import { aggregateShard } from '../../lib/sweeps/aggregate-shard.ts';
import { getSweepReport } from '../../lib/sweeps/get-sweep-report.ts';
import { parseShardSpec } from '../../lib/sweeps/shard-spec.ts';
import { sweepStepHandlers } from '../../lib/sweeps/sweep-step-handlers.ts';
import type { SweepExecutionInput } from '../../lib/sweeps/workflow/sweep-steps.ts';
import { driveSweep } from './support/drive-sweep.ts';
import { rateScript } from './support/scripted-rollout.ts';
import { openSweepFixture, type SweepFixture } from './support/sweep-fixture.ts';

let fx: SweepFixture;
afterEach(() => fx?.close());

const RATES: Record<string, number> = { 'ck-0': 0.3, 'ck-1': 0.6 };
const script = rateScript((ck, _suite, mode) => (RATES[ck] ?? 0) + (mode === 'lenient' ? 0.2 : 0));
const input = (sweepId: string, extra: Partial<SweepExecutionInput> = {}): SweepExecutionInput => ({ sweepId, trigger: 'manual', requestedAt: '2026-12-02T10:05:00.000Z', ...extra });

describe('sweep steps over the local ports', () => {
  it('plans shards of at most shardMaxTasks tasks, writes shard specs the rollout job can parse', async () => {
    fx = openSweepFixture({ settings: { shardMaxTasks: 8, tasksPerChild: 3 } });
    await fx.seed({ checkpoints: 2, suites: 2, tasks: 20 });
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    const v = await steps['validate-sweep'](fx.ports, input('s1'));
    expect(v).toEqual({ sweepId: 's1', sweepKey: 'SWEEP#s1/SWEEP', checkpoints: 2, suites: 2, modes: 2 });
    const plan = await steps['plan-shards'](fx.ports, { sweepId: 's1' });
    // 20 tasks / 8 → 3 shards per cell; 2 × 2 × 2 cells.
    expect(plan.shardCount).toBe(24);
    expect(plan.shards[0]).toEqual({ shardId: 'c0-s0-strict-0', shardKey: 'sweeps/s1/shards/c0-s0-strict-0.json', checkpoint: 'ck-0', suite: 'suite-0', mode: 'strict', arraySize: 3, gpus: 1 });
    const last = plan.shards.find((s) => s.shardId === 'c0-s0-strict-2')!;
    const spec = parseShardSpec(JSON.parse(new TextDecoder().decode((await fx.ports.blobs.get(last.shardKey))!)));
    expect(spec.taskIds).toEqual(['t016', 't017', 't018', 't019']);
    expect(spec.arraySize).toBe(2); // ⌈4 / 3⌉ = 2, and Batch arrays start at 2
    expect(spec.shardCount).toBe(2);
    // Task records holding only the task JSON are copied to blobs for the job.
    expect(spec.taskKeys[0]).toBe('sweeps/s1/tasks/suite-0/t016.json');
    expect(JSON.parse(new TextDecoder().decode((await fx.ports.blobs.get(spec.taskKeys[0]!))!))).toMatchObject({ id: 't016', suite: 'suite-0' });
    expect(spec.runId).toBe('sweep.s1.ck-0.suite-0.strict.2');
    expect(spec).toMatchObject({ checkpoint: 'ck-0', model: 'openai:ck-0@http://127.0.0.1:9/v1', attempts: 1, outputPrefix: 'sweeps/s1/results/c0-s0-strict-2' });
    expect(spec.serving).toEqual({ kind: 'endpoint', model: 'openai:ck-0@http://127.0.0.1:9/v1' });
    // Planning again answers the same plan (a replay).
    expect(await steps['plan-shards'](fx.ports, { sweepId: 's1' })).toEqual(plan);
  });

  it('aggregates every shard into one result per checkpoint × suite × mode with a CI', async () => {
    fx = openSweepFixture({ settings: { shardMaxTasks: 8 } });
    await fx.seed({ checkpoints: 2, suites: 1, tasks: 20 });
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    const { notice } = await driveSweep(steps, fx.ports, input('s1'), { script });
    expect(notice).toEqual({ sweepId: 's1', status: 'succeeded', succeededShards: 12, failedShards: 0 });
    const { items } = await listResults(fx.ports, { sweep: 's1' });
    expect(items).toHaveLength(4);
    const strict1 = items.find((r) => r.checkpoint === 'ck-1' && r.mode === 'strict')!;
    // (t mod 10) < 6 for t in 0..19: 12 of 20 pass.
    expect(strict1).toMatchObject({ score: 0.6, n: 20, tasks: 20, attempts: 20, passes: 12, shards: 3, shardsAggregated: 3, shardsFailed: 0, attemptsKeys: ['EVAL#sweep.s1.ck-1.suite-0.strict.0.shard-{0..1}', 'EVAL#sweep.s1.ck-1.suite-0.strict.1.shard-{0..1}', 'EVAL#sweep.s1.ck-1.suite-0.strict.2.shard-{0..1}'] });
    expect(strict1.ci!.low).toBeLessThan(0.6);
    expect(strict1.ci!.high).toBeGreaterThan(0.6);
    expect(items.find((r) => r.checkpoint === 'ck-0' && r.mode === 'lenient')!.score).toBe(0.5);
  });

  it('is idempotent: a re-run of the same sweep id, and a shard aggregated twice, never double-count', async () => {
    fx = openSweepFixture({ settings: { shardMaxTasks: 5 } });
    await fx.seed({ checkpoints: 2, suites: 2, tasks: 10 });
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    const first = await driveSweep(steps, fx.ports, input('s1', { attemptsPerTask: 2 }), { script });
    const before = (await listResults(fx.ports, { sweep: 's1' })).items.map(({ updatedAt: _u, ...r }) => r);
    fx.tick(60_000);
    // The whole sweep again (a resume after a crash: attempts exist, every step runs again).
    const second = await driveSweep(steps, fx.ports, input('s1', { attemptsPerTask: 2 }), { script, skipRollout: true });
    expect(second.outcomes).toEqual(first.outcomes);
    expect(second.notice).toEqual(first.notice);
    // One shard's aggregation repeated on its own.
    const plan = await steps['plan-shards'](fx.ports, { sweepId: 's1' });
    await aggregateShard(fx.ports, { sweepId: 's1', shard: plan.shards[0]!, job: { jobId: 'again', status: 'SUCCEEDED' } });
    await aggregateShard(fx.ports, { sweepId: 's1', shard: plan.shards[0]!, job: { jobId: 'again', status: 'SUCCEEDED' } });
    const after = (await listResults(fx.ports, { sweep: 's1' })).items.map(({ updatedAt: _u, ...r }) => r);
    expect(after).toEqual(before);
    // 2 checkpoints × 2 suites × 2 modes × 10 tasks × 2 attempts scored in all, once each.
    expect(after.reduce((a, r) => a + r.attempts, 0)).toBe(160);
    // The time series holds one point per sweep, not one per aggregation.
    expect((await listResults(fx.ports, { suite: 'suite-0', checkpoint: 'ck-0', mode: 'strict' })).items).toHaveLength(1);
  });

  it('a failed shard fails only itself: recorded, counted in its cell, named in the report, the sweep is partial', async () => {
    fx = openSweepFixture({ settings: { shardMaxTasks: 5 } });
    await fx.seed({ checkpoints: 1, suites: 1, tasks: 10 });
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    const { notice, outcomes } = await driveSweep(steps, fx.ports, input('s1', { modes: ['strict'] }), { script, failShard: (s) => s.shardId === 'c0-s0-strict-1' });
    expect(notice).toEqual({ sweepId: 's1', status: 'partial', succeededShards: 1, failedShards: 1 });
    expect(outcomes[1]).toEqual({ shardId: 'c0-s0-strict-1', status: 'failed', error: 'States.TaskFailed' });
    const report = await getSweepReport(fx.ports, 's1');
    expect(report.sweep.status).toBe('partial');
    expect(report.failedShards).toEqual([{ shardId: 'c0-s0-strict-1', checkpoint: 'ck-0', suite: 'suite-0', mode: 'strict', error: 'States.TaskFailed', reason: 'Essential container in task exited' }]);
    expect(report.results[0]).toMatchObject({ tasks: 10, n: 5, shards: 2, shardsAggregated: 1, shardsFailed: 1, score: 0.6 });
    // A re-run in which the shard succeeds replaces the failure; a later failure of a succeeded shard keeps the result.
    const plan = await steps['plan-shards'](fx.ports, { sweepId: 's1' });
    const { runScriptedShard } = await import('./support/scripted-rollout.ts');
    await runScriptedShard(fx.ports, plan.shards[1]!.shardKey, script);
    expect(await steps['aggregate-shard'](fx.ports, { sweepId: 's1', shard: plan.shards[1]!, job: { jobId: 'j', status: 'SUCCEEDED' } })).toMatchObject({ status: 'succeeded' });
    expect(await steps['record-shard-failure'](fx.ports, { sweepId: 's1', shard: plan.shards[1]!, error: { Error: 'States.TaskFailed' } })).toMatchObject({ status: 'succeeded' });
    const cell = await fx.ports.records.get(sweepKeys.cell('s1', 'ck-0', 'suite-0', 'strict').pk, sweepKeys.cell('s1', 'ck-0', 'suite-0', 'strict').sk);
    expect(cell).toMatchObject({ n: 10, shardsAggregated: 2, shardsFailed: 0 });
  });

  it('infrastructure errors and ungraded attempts are counted apart, never as failures', async () => {
    fx = openSweepFixture();
    await fx.seed({ checkpoints: 1, suites: 1, tasks: 4 });
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    const statuses = ['passed', 'failed', 'infrastructure-error', 'ungraded'] as const;
    await driveSweep(steps, fx.ports, input('s1', { modes: ['strict'] }), { script: ({ taskId }) => statuses[Number(taskId.slice(1))]! });
    const [r] = (await listResults(fx.ports, { sweep: 's1' })).items;
    expect(r).toMatchObject({ tasks: 4, n: 2, attempts: 2, passes: 1, score: 0.5, infrastructureErrors: 1, ungraded: 1 });
  });

  it("a large suite's per-task tallies live in a blob, and comparisons still pair them", async () => {
    fx = openSweepFixture({ settings: { shardMaxTasks: 1000, tasksPerChild: 250 } });
    await fx.seed({ checkpoints: 2, suites: 1, tasks: 2000 });
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    const rates: Record<string, number> = { 'ck-0': 0.3, 'ck-1': 0.6 };
    await driveSweep(steps, fx.ports, input('big', { modes: ['strict'] }), { script: rateScript((ck) => rates[ck]!) });
    const cell = (await fx.ports.records.get(sweepKeys.cell('big', 'ck-1', 'suite-0', 'strict').pk, sweepKeys.cell('big', 'ck-1', 'suite-0', 'strict').sk))!;
    expect(cell.perTask).toBeUndefined();
    expect(cell.perTaskKey).toMatch(/^sweeps\/big\/cells\//);
    expect(JSON.stringify(cell).length).toBeLessThan(4000);
    expect(cell).toMatchObject({ n: 2000, passes: 1200, score: 0.6 });
    const report = await getSweepReport(fx.ports, 'big');
    const c1 = report.comparisons.find((c) => c.checkpoint === 'ck-0')!;
    expect(c1).toMatchObject({ incumbent: 'ck-1', paired: true, n: 2000, verdict: 'worse' });
    expect(c1.difference).toBeCloseTo(-0.3, 12);
  });
});
