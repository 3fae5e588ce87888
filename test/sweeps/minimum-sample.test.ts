/**
 * The failing examples made impossible: one task gave "+100.0 pts [43.9, 156.1] … better" (an interval past
 * 100 points, a verdict on n = 1), and a suite was marked saturated on one task. Driven through the real sweep steps
 * on local ports; the report is read through the real HTTP dispatcher and as the CLI's table.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { getSuite } from '../../lib/registry/get-suite.ts';
import { MIN_TASKS_FOR_SATURATION, MIN_TASKS_FOR_VERDICT, SAMPLE_RULES } from '../../lib/shared/statistics/index.ts';
import { getSweepReport } from '../../lib/sweeps/get-sweep-report.ts';
import { formatReportTable } from '../../lib/sweeps/report-table.ts';
import { sweepStepHandlers } from '../../lib/sweeps/sweep-step-handlers.ts';
import { driveSweep } from './support/drive-sweep.ts';
import { rateScript } from './support/scripted-rollout.ts';
import { openSweepFixture, type SweepFixture } from './support/sweep-fixture.ts';

let fx: SweepFixture;
afterEach(() => fx?.close());

describe('minimum samples in sweeps', () => {
  it('one task: no verdict, and the interval of the difference stays inside ±100 points; the rule is in the JSON and the table', async () => {
    fx = openSweepFixture();
    await fx.seed({ checkpoints: 2, suites: 1, tasks: 1 });
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    await driveSweep(steps, fx.ports, { sweepId: 'one-1', trigger: 'manual', requestedAt: '2026-12-02T11:00:00.000Z', checkpoints: ['ck-0'], modes: ['strict'] }, { script: rateScript(() => 0) });
    // ck-1 solves the one task ck-0 failed: the old report said "+100.0 pts [43.9, 156.1] vs ck-0: better".
    await driveSweep(steps, fx.ports, { sweepId: 'one-2', trigger: 'manual', requestedAt: '2026-12-02T12:00:00.000Z', checkpoints: ['ck-1'], modes: ['strict'] }, { script: rateScript(() => 1) });

    const { status, json } = await fx.request('GET', '/v1/sweeps/one-2');
    expect(status).toBe(200);
    const c = json.comparisons[0];
    expect(c).toMatchObject({ checkpoint: 'ck-1', incumbent: 'ck-0', difference: 1, n: 1, verdict: 'too-few-tasks' });
    expect(c.ci.high).toBeLessThanOrEqual(1);
    expect(c.ci.low).toBeGreaterThanOrEqual(-1);
    expect(c.rule).toBe(`too-few-tasks: the difference rests on 1 task (unpaired, 1 task in the smaller cell); better / worse need ≥ ${MIN_TASKS_FOR_VERDICT}`);
    expect(json.rules).toEqual({ verdict: SAMPLE_RULES.sweepVerdict, saturation: SAMPLE_RULES.saturation });

    const table = formatReportTable(await getSweepReport(fx.ports, 'one-2'));
    expect(table).toContain('+100.0 pts [43.9, 100.0] vs ck-0: too-few-tasks (n=1)');
    expect(table).not.toContain('vs ck-0: better');
    expect(table).toContain(`rules: ${SAMPLE_RULES.sweepVerdict}.`);
  });

  it('a perfect score on one task saturates nothing, and the report says the rule', async () => {
    fx = openSweepFixture();
    await fx.seed({ checkpoints: 1, suites: 2, tasks: 1 });
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    await driveSweep(steps, fx.ports, { sweepId: 'sat-1', trigger: 'manual', requestedAt: fx.clock.now.toISOString(), modes: ['strict'] }, { script: rateScript(() => 1) });
    const suite = await getSuite(fx.ports.records, 'suite-0');
    expect(suite.status).toBe('active');
    expect(suite.best).toMatchObject({ score: 1, checkpoint: 'ck-0' }); // the series still records the point
    expect(fx.events.filter((e) => e.type === 'suite.saturated')).toEqual([]);
    const report = await getSweepReport(fx.ports, 'sat-1');
    expect(report.saturated).toEqual([]);
    expect(formatReportTable(report)).toContain(`a suite is saturated only when its best strict score reaches the threshold over ≥ ${MIN_TASKS_FOR_SATURATION} scored tasks`);
  });

  it(`${MIN_TASKS_FOR_SATURATION - 1} tasks are still too few; ${MIN_TASKS_FOR_SATURATION} saturate`, async () => {
    fx = openSweepFixture();
    await fx.seed({ checkpoints: 1, suites: 1, tasks: MIN_TASKS_FOR_SATURATION - 1 });
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    await driveSweep(steps, fx.ports, { sweepId: 'few', trigger: 'manual', requestedAt: fx.clock.now.toISOString(), modes: ['strict'] }, { script: rateScript(() => 1) });
    expect((await getSuite(fx.ports.records, 'suite-0')).status).toBe('active');
    fx.close();

    fx = openSweepFixture();
    await fx.seed({ checkpoints: 1, suites: 1, tasks: MIN_TASKS_FOR_SATURATION });
    const again = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    await driveSweep(again, fx.ports, { sweepId: 'enough', trigger: 'manual', requestedAt: fx.clock.now.toISOString(), modes: ['strict'] }, { script: rateScript(() => 1) });
    expect((await getSuite(fx.ports.records, 'suite-0')).status).toBe('saturated');
  });
});
