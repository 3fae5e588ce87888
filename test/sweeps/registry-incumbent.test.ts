/**
 * Sweeps compare against the registry's incumbent (the checkpoint an experiment shipped) when it has a score on the
 * suite version; otherwise against the best active checkpoint of earlier sweeps, as before.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setIncumbent } from '../../lib/registry/incumbent.ts';
import { getSweepReport } from '../../lib/sweeps/get-sweep-report.ts';
import { sweepStepHandlers } from '../../lib/sweeps/sweep-step-handlers.ts';
import { driveSweep } from './support/drive-sweep.ts';
import { rateScript } from './support/scripted-rollout.ts';
import { openSweepFixture, type SweepFixture } from './support/sweep-fixture.ts';

let fx: SweepFixture;
afterEach(() => fx?.close());

describe("the registry's incumbent in sweeps", () => {
  it('is the checkpoint to beat when it has a scored cell on the suite version; else the best active one is', async () => {
    fx = openSweepFixture();
    await fx.seed({ checkpoints: 4, suites: 1, tasks: 30 });
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    const rates: Record<string, number> = { 'ck-0': 0.3, 'ck-1': 0.7, 'ck-2': 0.6, 'ck-3': 0.2 };
    const script = rateScript((ck) => rates[ck]!);
    // Sweep 1 scores ck-0 (0.3) and ck-1 (0.7): by the old rule ck-1 is the one to beat.
    await driveSweep(steps, fx.ports, { sweepId: 'r1', trigger: 'manual', requestedAt: '2026-12-02T11:00:00.000Z', checkpoints: ['ck-0', 'ck-1'], modes: ['strict'] }, { script });

    // An experiment shipped ck-0: it is what is served, and what a sweep compares with.
    await setIncumbent(fx.ports.records, { checkpoint: 'ck-0', experimentId: 'exp-1', by: 'ana' }, new Date('2026-12-02T11:30:00.000Z'));
    await driveSweep(steps, fx.ports, { sweepId: 'r2', trigger: 'manual', requestedAt: '2026-12-02T12:00:00.000Z', checkpoints: ['ck-2'], modes: ['strict'] }, { script });
    const vsRegistry = (await getSweepReport(fx.ports, 'r2')).comparisons[0]!;
    expect(vsRegistry).toMatchObject({ checkpoint: 'ck-2', incumbent: 'ck-0', incumbentSource: 'registry', verdict: 'better', paired: true, n: 30 });
    expect(vsRegistry.difference).toBeCloseTo(0.3, 12);
    expect(vsRegistry.rule).toContain("vs the registry's incumbent (shipped by an experiment)");

    // Swept in the same sweep, the registry's incumbent is marked as the one to beat, with its own cell of this sweep.
    await driveSweep(steps, fx.ports, { sweepId: 'r3', trigger: 'manual', requestedAt: '2026-12-02T13:00:00.000Z', checkpoints: ['ck-0', 'ck-1'], modes: ['strict'] }, { script });
    const r3 = Object.fromEntries((await getSweepReport(fx.ports, 'r3')).comparisons.map((c) => [c.checkpoint, c]));
    expect(r3['ck-0']).toMatchObject({ verdict: 'incumbent', incumbentSource: 'registry' });
    expect(r3['ck-1']).toMatchObject({ verdict: 'better', incumbent: 'ck-0' });

    // A registry incumbent never scored on this suite: the best active checkpoint of earlier sweeps (ck-1, 0.7).
    await setIncumbent(fx.ports.records, { checkpoint: 'never-swept', by: 'ana' }, new Date('2026-12-02T13:30:00.000Z'));
    await driveSweep(steps, fx.ports, { sweepId: 'r4', trigger: 'manual', requestedAt: '2026-12-02T14:00:00.000Z', checkpoints: ['ck-3'], modes: ['strict'] }, { script });
    const fallback = (await getSweepReport(fx.ports, 'r4')).comparisons[0]!;
    expect(fallback).toMatchObject({ checkpoint: 'ck-3', incumbent: 'ck-1', incumbentSource: 'best-active', verdict: 'worse' });
    expect(fallback.rule).toContain('vs the best active checkpoint of earlier sweeps on this suite version');
  });
});
