/**
 * The experiment statistics proved by simulation, at sizes that run in seconds (`npm run sim:experiments` runs the
 * full ones and prints the figures). Every tolerance is worked out, not guessed:
 * - a rate over R replications is Binomial(R, p): the allowed counts are its exact central range with 0.1% in the
 *   tails (`binomialRange`, itself checked against scipy below);
 * - a mean over replications is allowed 3 of its standard errors (0.27% two-sided under normality).
 * The truths (q̄, ρ, the value per turn) come from the model's formulas (`model-truths.ts`), checked here against a
 * large draw. Seeds are fixed, so each figure is reproducible; the tolerances say what chance alone could do to it.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { modelTruths } from '../../bench/simulation/model-truths.ts';
import { binomialRange, meanWithError } from '../../bench/simulation/monte-carlo-error.ts';
import { PREDICTIVE_USER_MODEL, simulateCuped } from '../../bench/simulation/simulate-cuped.ts';
import { simulatePeeking } from '../../bench/simulation/simulate-peeking.ts';
import { simulatePower } from '../../bench/simulation/simulate-power.ts';
import { simulateRampRollback } from '../../bench/simulation/simulate-ramp-rollback.ts';
import { simulateRatioCoverage } from '../../bench/simulation/simulate-ratio-coverage.ts';
import { simulateSrm } from '../../bench/simulation/simulate-srm.ts';
import { SeededRandom } from '../../bench/simulation/seeded-random.ts';
import { DEFAULT_USER_MODEL, drawPeriod, drawUser } from '../../bench/simulation/user-model.ts';
import { tempDirs } from '../support/temp-dirs.ts';

const SEED = 20261204;
const tempDir = tempDirs('flywheel-sim-');

describe('the simulation itself', () => {
  it('works out the user model truths its scenarios are judged against (a draw of 200,000 users agrees within 4 se)', () => {
    for (const model of [DEFAULT_USER_MODEL, PREDICTIVE_USER_MODEL]) {
      const truth = modelTruths(model);
      const random = new SeededRandom(SEED).fork('truths');
      const n = 200_000;
      const post: number[] = [];
      const pre: number[] = [];
      const success: number[] = [];
      const turns: number[] = [];
      for (let i = 0; i < n; i++) {
        const user = drawUser(random, model);
        const p = drawPeriod(random, model, user);
        pre.push(drawPeriod(random, model, user, {}, { exposed: false }).valueSum);
        post.push(p.valueSum);
        success.push(p.succeeded);
        turns.push(p.turns);
      }
      const x = meanWithError(post);
      expect(Math.abs(x.mean - truth.valueMean)).toBeLessThan(4 * x.se);
      const q = meanWithError(success);
      expect(Math.abs(q.mean - truth.successShare)).toBeLessThan(4 * q.se);
      const c = meanWithError(pre);
      let cov = 0;
      let vx = 0;
      let vc = 0;
      for (let i = 0; i < n; i++) {
        cov += (post[i]! - x.mean) * (pre[i]! - c.mean);
        vx += (post[i]! - x.mean) ** 2;
        vc += (pre[i]! - c.mean) ** 2;
      }
      const rho = cov / Math.sqrt(vx * vc);
      // The sample correlation's standard error is about (1 − ρ²)/√n for near-normal data; heavy tails widen it, so
      // the bound is 10 of those (still under 0.02 here), against a correlation the scenarios read to ±0.01 at best.
      expect(Math.abs(rho - truth.prePostCorrelation)).toBeLessThan((10 * (1 - truth.prePostCorrelation ** 2)) / Math.sqrt(n));
      const k = meanWithError(turns);
      expect(Math.abs(k.mean - truth.turnsPerUnit)).toBeLessThan(4 * k.se);
      expect(Math.sqrt(vx / (n - 1)) / truth.valueSd).toBeGreaterThan(0.95);
      expect(Math.sqrt(vx / (n - 1)) / truth.valueSd).toBeLessThan(1.05);
    }
  });

  it('works out the Monte-Carlo ranges as scipy does (binom.ppf and binom.isf at 0.05% each side)', () => {
    const cases: Array<[number, number]> = [[300, 0.05], [500, 0.95], [300, 0.8], [3000, 0.001], [100, 0.9997]];
    const script = ['import json, sys', 'from scipy.stats import binom', 'cases = json.loads(sys.argv[1])', 'print(json.dumps([[int(binom.ppf(0.0005, n, p)), int(binom.isf(0.0005, n, p))] for n, p in cases]))'].join('\n');
    const reference = JSON.parse(execFileSync('python3', ['-c', script, JSON.stringify(cases)], { encoding: 'utf8' })) as Array<[number, number]>;
    cases.forEach(([n, p], i) => {
      const range = binomialRange(n, p);
      expect([range.low, range.high], `Binomial(${n}, ${p})`).toEqual(reference[i]);
    });
  });

  it('is reproducible: the same seed gives the same figures, another seed other ones', () => {
    const run = (seed: number) => simulatePeeking({ seed, kind: 'mean', replications: 20, unitsPerArm: 300, looks: 5 });
    expect(run(SEED)).toEqual(run(SEED));
    const draws = (seed: number) => Array.from({ length: 5 }, () => new SeededRandom(seed).fork('x').uniform());
    expect(draws(1)).toEqual(draws(1));
    expect(new SeededRandom(1).uniform()).not.toBe(new SeededRandom(2).uniform());
  });
});

describe('experiment statistics by simulation', () => {
  it.each(['binomial', 'mean'] as const)('A/A with 20 looks (%s): the always-valid interval keeps false positives ≤ alpha; naive peeking inflates them', (kind) => {
    const result = simulatePeeking({ seed: SEED, kind, replications: 300, unitsPerArm: 1000, looks: 20 });
    expect(result.missingIntervals).toBe(0);
    // At or below alpha: no more hits than Binomial(300, 0.05) gives with 0.05% left above.
    expect(result.sequential.hits).toBeLessThanOrEqual(result.alphaRange.high);
    // Naive peeking: more hits than a 5% rate could give by chance, and climbing with the looks.
    expect(result.naive.hits).toBeGreaterThan(result.alphaRange.high);
    expect(result.naive.byLook[19]!).toBeGreaterThan(result.naive.byLook[0]!);
    // The same fixed-horizon interval read once, at the end, is a 5% test.
    expect(result.finalLookOnly.hits).toBeGreaterThanOrEqual(result.alphaRange.low);
    expect(result.finalLookOnly.hits).toBeLessThanOrEqual(result.alphaRange.high);
  });

  it('reaches the nominal power at the planned sample for a true effect equal to the MDE', () => {
    const result = simulatePower({ seed: SEED, replications: 300, mde: 0.15 });
    expect(result.nominal).toBeGreaterThanOrEqual(0.8);
    expect(result.observed.hits).toBeGreaterThanOrEqual(result.nominalRange.low);
    expect(result.observed.hits).toBeLessThanOrEqual(result.nominalRange.high);
    // The always-valid interval pays for peeking with power at the planned sample.
    expect(result.sequential.rate).toBeLessThan(result.observed.rate);
  });

  it('CUPED with a predictive pre-period removes ρ² of the variance and narrows the interval by √(1 − ρ²), without bias', () => {
    const result = simulateCuped({ seed: SEED, replications: 200, unitsPerArm: 500, trueLift: 0.03 });
    expect(result.rho).toBeGreaterThan(0.8);
    expect(Math.abs(result.varianceReduction.mean - result.rhoSquared)).toBeLessThanOrEqual(3 * result.varianceReduction.se);
    expect(Math.abs(result.widthRatio.mean - result.widthRatio.theory)).toBeLessThanOrEqual(3 * result.widthRatio.se);
    expect(Math.abs(result.empiricalVarianceRatio - (1 - result.rhoSquared))).toBeLessThanOrEqual(3 * result.empiricalVarianceRatioSe);
    expect(Math.abs(result.cupedLift.mean - result.trueLift)).toBeLessThanOrEqual(3 * result.cupedLift.se);
  });

  it('detects a sample-ratio mismatch when one arm loses 3% of its exposures, and raises ≈ 0.1% false alarms in A/A', () => {
    const result = simulateSrm({ seed: SEED, replications: 100, units: 200_000, aaReplications: 3000, aaUnits: 2000 });
    expect(result.detection.expected).toBeGreaterThan(0.999);
    expect(result.detection.hits).toBeGreaterThanOrEqual(result.detection.range.low);
    expect(result.falseAlarms.hits).toBeLessThanOrEqual(result.falseAlarms.range.high);
    // At a smaller sample the theory's detection rate (≈ 0.93 at 100,000 units) is what the check achieves.
    const smaller = simulateSrm({ seed: SEED + 1, replications: 200, units: 100_000, aaReplications: 0, aaUnits: 0 });
    expect(smaller.detection.expected).toBeLessThan(0.97);
    expect(smaller.detection.hits).toBeGreaterThanOrEqual(smaller.detection.range.low);
    expect(smaller.detection.hits).toBeLessThanOrEqual(smaller.detection.range.high);
  });

  it('a ratio metric by the delta method covers 95% with correlated turns; a naive per-turn interval undercovers', () => {
    const result = simulateRatioCoverage({ seed: SEED, replications: 400, unitsPerArm: 800, trueLift: 0.1 });
    for (const hits of [result.unit.arm.hits, result.unit.lift.hits]) {
      expect(hits).toBeGreaterThanOrEqual(result.nominalRange.low);
      expect(hits).toBeLessThanOrEqual(result.nominalRange.high);
    }
    expect(result.naive.arm.hits).toBeLessThan(result.nominalRange.low);
    expect(result.naive.lift.hits).toBeLessThan(result.nominalRange.low);
  });

  it('the ramp rolls back a 20% latency regression at the first analysis that sees it, through the archive, DuckDB and the schedule', async () => {
    const result = await simulateRampRollback({ seed: SEED, dataDir: tempDir(), users: 20_000 });
    expect(result.stoppedAt).toMatchObject({ reason: 'guardrail' });
    expect(result.firstBreachDay).toBeDefined();
    expect(result.stoppedAt!.day).toBe(result.firstBreachDay);
    // Before the breach was visible the ramp widened as it should; from then on never.
    for (const day of result.days) {
      const widened = day.actions.some((a) => a.kind === 'widen-ramp');
      if (day.day < result.firstBreachDay!) expect(day.guardrail.breached).toBe(false);
      if (day.guardrail.breached) expect(widened).toBe(false);
      expect(day.srmMismatch).toBe(false);
    }
    expect(result.widestStep).toBeLessThan(result.ramp.length - 1);
    expect(result.finalStatus).toBe('stopped');
    expect(result.stoppedArms).toEqual(['treatment (guardrail)']);
    expect(result.changes).toContain('rolled-back');
    expect(result.alerts.some((a) => a.includes('arm treatment stopped (guardrail breach)'))).toBe(true);
    expect(result.treatmentAssignmentsAfter).toBe(0);
  });
});
