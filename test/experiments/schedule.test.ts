/**
 * The experiments' schedule over the real local drivers and DuckDB over a simulated raw archive (users with
 * heterogeneous base rates and repeat turns, known effects): a latency regression on the treatment breaches its
 * guardrail and the ramp rolls back (the arm stopped, the experiment stopped, one alert each to a stand-in Slack
 * webhook); an arm whose serving path lost a fifth of its units' exposures trips the sample-ratio check; a ramp with
 * guardrails holding widens step by step once each step held its hours; past maxDurationDays the experiment stops and
 * people are asked to decide; a rerun, even after a tick that died half-way, repeats nothing; every tenant an API key
 * names gets its own run.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiKey } from '../../lib/auth/api-keys.ts';
import { getExperiment, listChanges } from '../../lib/experiments/experiment-store.ts';
import { runExperimentSchedule, runExperimentScheduleForAllTenants } from '../../lib/experiments/schedule/run-experiment-schedule.ts';
import type { ExperimentInput } from '../../lib/experiments/schemas.ts';
import { openHarness, type Harness } from '../support/lambda-events.ts';
import { simulateArchive, writeArchive, type SimulationOptions } from './analysis-support.ts';
import { checkpointBody, fakeSlack } from './decisions-support.ts';

const HOUR = 3600_000;
const T0 = new Date('2026-11-20T00:00:00.000Z');

let slack: Awaited<ReturnType<typeof fakeSlack>>;
let h: Harness | undefined;
beforeAll(async () => {
  slack = await fakeSlack();
  vi.stubEnv('FLYWHEEL_SLACK_WEBHOOK_URL', slack.url);
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await slack.close();
});
afterEach(() => {
  h?.close();
  h = undefined;
});

/** A running experiment (started at T0, ramp 5 → 25 → 50 %, 24 h a step) over a simulated archive. */
async function setUp(id: string, sim: Partial<SimulationOptions>, definition: Partial<ExperimentInput> = {}): Promise<Harness> {
  const harness = openHarness(T0);
  for (const c of ['ckpt-control', 'ckpt-treatment']) expect((await harness.request('POST', '/v1/checkpoints', { body: checkpointBody(c) })).status).toBeLessThan(300);
  const created = await harness.request('POST', '/v1/experiments', {
    body: {
      id,
      name: 'treatment vs control',
      arms: [{ id: 'control', checkpoint: 'ckpt-control', control: true }, { id: 'treatment', checkpoint: 'ckpt-treatment' }],
      metrics: { primary: 'accepted', guardrails: [{ metric: 'latency_ms_per_turn', maxRegression: 0.05 }] },
      plannedUnitsPerArm: 1500,
      ramp: [{ percent: 5, minHours: 24 }, { percent: 25, minHours: 24 }, { percent: 50, minHours: 24 }],
      cupedPreDays: 0,
      ...definition,
    },
  });
  expect(created.status).toBe(201);
  expect((await harness.request('POST', `/v1/experiments/${id}/start`, { body: {} })).status).toBe(200);
  const archive = simulateArchive({ seed: 7, experimentId: id, startedAt: T0, users: 3000, arms: [{ id: 'control', weight: 1 }, { id: 'treatment', weight: 1 }], entryDays: 1, ...sim });
  await writeArchive(harness.ports.blobs, 'default', archive);
  harness.clock.now = new Date(T0.getTime() + 36 * HOUR);
  return harness;
}

const newPosts = (from: number) => slack.posts.slice(from).map((p) => p.text);

describe('the experiments schedule', () => {
  it('a guardrail breach stops the arm and rolls the ramp back, with one alert each; a rerun repeats nothing', { timeout: 30_000 }, async () => {
    h = await setUp('exp-guard', { effects: { treatment: { latency: 0.25 } } });
    const posts = slack.posts.length;
    const run = await runExperimentSchedule(h.ports);
    expect(run.experiments).toHaveLength(1);
    expect(run.experiments[0]?.error).toBeUndefined();
    expect(run.experiments[0]?.actions.map((a) => a.kind)).toEqual(['stop-arm', 'stop']);
    const e = await getExperiment(h.ports.records, 'exp-guard');
    expect(e.status).toBe('stopped');
    expect(e.stoppedArms).toEqual([expect.objectContaining({ arm: 'treatment', reason: 'guardrail', analysisId: run.experiments[0]?.analysisId })]);
    expect(e.stoppedArms[0]?.detail).toMatch(/latency_ms_per_turn .* on treatment: \+2\d\.\d%/);
    const changes = (await listChanges(h.ports.records, 'exp-guard')).map((c) => c.change);
    expect(changes).toEqual(['created', 'started', 'analysed', 'rolled-back', 'stopped']);
    expect(newPosts(posts)).toEqual([
      ':rotating_light: Experiment exp-guard: arm treatment stopped (guardrail breach), ramp rolled back',
      ':rotating_light: Experiment exp-guard stopped: decide',
    ]);
    expect(h.ports.events.after(0, { types: ['experiment.arm-stopped', 'experiment.stopped'] }).map((x) => x.id)).toEqual(['experiment.arm-stopped:exp-guard:treatment', 'experiment.stopped:exp-guard']);

    // The next tick: nothing is running, nothing is sent.
    h.clock.now = new Date(h.clock.now.getTime() + HOUR);
    expect((await runExperimentSchedule(h.ports)).experiments).toEqual([]);
    expect(newPosts(posts)).toHaveLength(2);
  });

  it('an arm whose serving path lost a fifth of the exposures of its units trips the sample-ratio check and is stopped', { timeout: 30_000 }, async () => {
    h = await setUp('exp-srm', { dropUnits: { treatment: 0.2 } });
    const posts = slack.posts.length;
    const run = await runExperimentSchedule(h.ports);
    const stop = run.experiments[0]?.actions[0];
    expect(stop).toMatchObject({ kind: 'stop-arm', arm: 'treatment', reason: 'srm' });
    expect((stop as { detail: string }).detail).toMatch(/sample-ratio mismatch: chi-squared \d+\.\d+, p = .* < 0\.001/);
    expect((await getExperiment(h.ports.records, 'exp-srm')).stoppedArms.map((s) => s.reason)).toEqual(['srm']);
    expect(newPosts(posts)[0]).toBe(':rotating_light: Experiment exp-srm: arm treatment stopped (sample-ratio mismatch), ramp rolled back');
  });

  it('widens the ramp once a step held its hours with guardrails holding, once per step; every tenant gets a run', { timeout: 30_000 }, async () => {
    h = await setUp('exp-ramp', {});
    await createApiKey(h.ports.records, { tenant: 'acme', scopes: 'read' }, h.clock.now);
    const runs = await runExperimentScheduleForAllTenants(h.ports);
    expect(runs.map((r) => [r.tenant, r.experiments.length])).toEqual([['acme', 0], ['default', 1]]);
    expect(runs[1]?.experiments[0]?.actions).toEqual([{ kind: 'widen-ramp', toStep: 1 }]);
    expect((await getExperiment(h.ports.records, 'exp-ramp')).rampStep).toBe(1);
    // The same hour again: step 1 has not held 24 hours yet.
    expect((await runExperimentSchedule(h.ports)).experiments[0]?.actions).toEqual([{ kind: 'none' }]);
    h.clock.now = new Date(h.clock.now.getTime() + 24 * HOUR);
    expect((await runExperimentSchedule(h.ports)).experiments[0]?.actions).toEqual([{ kind: 'widen-ramp', toStep: 2 }]);
    const e = await getExperiment(h.ports.records, 'exp-ramp');
    expect([e.status, e.rampStep, e.rampStepSince]).toEqual(['running', 2, h.clock.now.toISOString()]);
    expect((await listChanges(h.ports.records, 'exp-ramp')).filter((c) => c.change === 'ramped').map((c) => c.detail.percent)).toEqual([25, 50]);
  });

  it('past maxDurationDays the experiment stops and people are asked to decide', { timeout: 30_000 }, async () => {
    h = await setUp('exp-long', {}, { maxDurationDays: 1, ramp: [{ percent: 100, minHours: 0 }] });
    const posts = slack.posts.length;
    const run = await runExperimentSchedule(h.ports);
    expect(run.experiments[0]?.actions).toEqual([{ kind: 'stop', reason: expect.stringContaining('maximum of 1 days') }]);
    const e = await getExperiment(h.ports.records, 'exp-long');
    expect([e.status, e.stopReason]).toEqual(['stopped', expect.stringContaining('decide ship, rollback or extend')]);
    expect(newPosts(posts)).toEqual([':warning: Experiment exp-long stopped: decide']);
  });
});

describe('the experiments schedule after a crash', () => {
  it('a tick that died while telling people is repeated by the next: one alert, one change each', { timeout: 30_000 }, async () => {
    h = await setUp('exp-crash', { effects: { treatment: { latency: 0.25 } } });
    const told: string[] = [];
    let die = true;
    const notify = async (n: { id?: string }) => {
      if (die) {
        die = false;
        throw new Error('the process died here');
      }
      told.push(n.id!);
    };
    const first = await runExperimentSchedule({ ...h.ports, notify });
    expect(first.experiments[0]?.error).toBe('the process died here');
    expect((await getExperiment(h.ports.records, 'exp-crash')).status).toBe('running');
    await runExperimentSchedule({ ...h.ports, notify });
    await runExperimentSchedule({ ...h.ports, notify });
    expect(told).toEqual(['experiment.arm-stopped:exp-crash:treatment', 'experiment.stopped:exp-crash']);
    const changes = (await listChanges(h.ports.records, 'exp-crash')).map((c) => c.change).filter((c) => c !== 'analysed');
    expect(changes).toEqual(['created', 'started', 'rolled-back', 'stopped']);
    expect((await getExperiment(h.ports.records, 'exp-crash')).stoppedArms).toHaveLength(1);
  });
});
