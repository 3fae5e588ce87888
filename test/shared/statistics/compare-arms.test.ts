/**
 * `compareArms` from per-unit sufficient statistics against independent computations on the raw units in python3:
 * standard errors (scipy `sem`), Welch's test (scipy `ttest_ind(equal_var=False)`, to 1e-9), the delta-method variances of a ratio and of a relative lift (numpy bootstrap, 4 000 resamples:
 * within 6%), CUPED against statsmodels OLS (the difference is the arm coefficient of X ~ arm + C, θ its C
 * coefficient, and the variance reduction 1 − SSR(X ~ arm + C) / SSR(X ~ arm)), and the chance to win against a
 * Monte Carlo draw from the flat-prior posteriors. Then the bounds and the minimum-sample rule.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { armValue, compareArms, MIN_UNITS_PER_ARM, pooledCupedTheta, type ArmMoments } from '../../../lib/shared/statistics/index.ts';
import { close, normals, pythonReference } from './support/reference.ts';
import { mulberry32 } from '../../../lib/shared/seeded-random.ts';

const SCRIPT = String.raw`
import json, sys
import numpy as np
from scipy import stats
import statsmodels.api as sm
c = json.load(sys.stdin)
rng = np.random.default_rng(14)
out = {}
m = c['mean']
a, b = np.array(m['control']), np.array(m['treatment'])
out['sem'] = [float(stats.sem(a)), float(stats.sem(b))]
boot = []
for _ in range(4000):
    ra = rng.choice(a, a.size); rb = rng.choice(b, b.size)
    boot.append((rb.mean() - ra.mean()) / ra.mean())
out['liftBootSd'] = float(np.std(boot, ddof=1))
w = c['welch']
out['welchP'] = float(stats.ttest_ind(np.array(w['treatment']), np.array(w['control']), equal_var=False).pvalue)
r = c['ratio']
xa, ya = np.array(r['control']['x']), np.array(r['control']['y'])
xb, yb = np.array(r['treatment']['x']), np.array(r['treatment']['y'])
rb_, lift_ = [], []
for _ in range(4000):
    ia = rng.integers(0, xa.size, xa.size); ib = rng.integers(0, xb.size, xb.size)
    ca = xa[ia].sum() / ya[ia].sum(); cb = xb[ib].sum() / yb[ib].sum()
    rb_.append(ca); lift_.append((cb - ca) / ca)
out['ratioBootSd'] = float(np.std(rb_, ddof=1))
out['ratioLiftBootSd'] = float(np.std(lift_, ddof=1))
k = c['cuped']
x = np.array(k['x']); cov = np.array(k['c']); t = np.array(k['t'], dtype=float)
full = sm.OLS(x, sm.add_constant(np.column_stack([t, cov]))).fit()
arm_only = sm.OLS(x, sm.add_constant(t)).fit()
out['ancova'] = {'difference': float(full.params[1]), 'theta': float(full.params[2]), 'reduction': float(1 - full.ssr / arm_only.ssr)}
p = c['posterior']
draws_c = rng.normal(p['control'][0], p['control'][1], 2_000_000)
draws_t = rng.normal(p['treatment'][0], p['treatment'][1], 2_000_000)
out['chanceToWin'] = float(np.mean(draws_t > draws_c))
print(json.dumps(out))
`;

function momentsOf(x: number[], extra: { y?: number[]; c?: number[] } = {}): ArmMoments {
  const m: ArmMoments = { units: x.length, sumX: 0, sumX2: 0 };
  x.forEach((v, i) => {
    m.sumX += v;
    m.sumX2 += v * v;
    if (extra.y) {
      const y = extra.y[i]!;
      m.sumY = (m.sumY ?? 0) + y;
      m.sumY2 = (m.sumY2 ?? 0) + y * y;
      m.sumXY = (m.sumXY ?? 0) + v * y;
    }
    if (extra.c) {
      const cv = extra.c[i]!;
      m.sumC = (m.sumC ?? 0) + cv;
      m.sumC2 = (m.sumC2 ?? 0) + cv * cv;
      m.sumXC = (m.sumXC ?? 0) + v * cv;
    }
  });
  return m;
}

const N = 20_000;
const u = mulberry32(2021);
const z = normals(u);
// Mean metric: skewed per-unit sums (cost-like), a 4% lift.
const skewed = (scale: number) => Array.from({ length: N }, () => scale * Math.exp(0.8 * z()));
const mean = { control: skewed(1), treatment: skewed(1.04) };
// Welch: a negative-mean metric (so the test is on the absolute difference), unequal variances and sizes.
const welch = { control: Array.from({ length: N }, () => -1 + 2 * z()), treatment: Array.from({ length: N / 2 }, () => -0.95 + 3 * z()) };
// Ratio: turns per user (Poisson-ish 1..12), latency per turn correlated with the user.
const ratioArm = (shift: number) => {
  const x: number[] = [];
  const y: number[] = [];
  for (let i = 0; i < N / 4; i++) {
    const turns = 1 + Math.floor(u() * 12);
    const userSpeed = Math.exp(0.5 * z());
    let total = 0;
    for (let k = 0; k < turns; k++) total += shift * userSpeed * (800 + 200 * z());
    x.push(total);
    y.push(turns);
  }
  return { x, y };
};
const ratio = { control: ratioArm(1), treatment: ratioArm(0.97) };
// CUPED: the pre-period value predicts the in-experiment one; the arm adds 0.05.
const cupedArm = (effect: number) => {
  const c = Array.from({ length: N / 2 }, () => 5 + 2 * z());
  return { c, x: c.map((cv) => 1 + 0.8 * cv + effect + z()) };
};
const cupedControl = cupedArm(0);
const cupedTreatment = cupedArm(0.05);
const posterior = { control: [0.3, 0.004], treatment: [0.309, 0.0042] };

interface Reference {
  sem: [number, number];
  liftBootSd: number;
  welchP: number;
  ratioBootSd: number;
  ratioLiftBootSd: number;
  ancova: { difference: number; theta: number; reduction: number };
  chanceToWin: number;
}
let ref: Reference;
beforeAll(() => {
  ref = pythonReference<Reference>(SCRIPT, {
    mean,
    welch,
    ratio,
    cuped: { x: [...cupedControl.x, ...cupedTreatment.x], c: [...cupedControl.c, ...cupedTreatment.c], t: [...cupedControl.x.map(() => 0), ...cupedTreatment.x.map(() => 1)] },
    posterior,
  });
});

describe('compareArms against the raw units', () => {
  it('mean metric: standard errors equal scipy sem (1e-9); the relative lift se is the bootstrap sd (within 6%); p and interval agree', () => {
    const r = compareArms(momentsOf(mean.control), momentsOf(mean.treatment), { kind: 'mean', direction: 'decrease' });
    expect(close(r.controlSe!, ref.sem[0], 1e-9)).toBe(true);
    expect(close(r.treatmentSe!, ref.sem[1], 1e-9)).toBe(true);
    const se = (r.ci!.high - r.ci!.low) / (2 * 1.959963984540054);
    expect(close(se, ref.liftBootSd, 0.06), `delta ${se} vs bootstrap ${ref.liftBootSd}`).toBe(true);
    // The p-value and the interval are the same test: p < 0.05 exactly when the 95% interval excludes 0.
    expect(r.pValue! < 0.05).toBe(r.ci!.low > 0 || r.ci!.high < 0);
    // A 4% rise of a metric whose good direction is decrease.
    expect(r.verdict).toBe('worse');
    expect(r.chanceToWin!).toBeLessThan(0.05);
  });

  it("Welch's test (scipy ttest_ind, equal_var=False) when the control value is not > 0: the test is on the difference", () => {
    const r = compareArms(momentsOf(welch.control), momentsOf(welch.treatment), { kind: 'mean', direction: 'increase' });
    expect(r.relativeLift).toBeNull();
    expect(r.ci).toBeNull();
    expect(close(r.pValue!, ref.welchP, 1e-9), `${r.pValue} vs ${ref.welchP}`).toBe(true);
    expect(r.rule).toContain('no relative lift');
  });

  it('ratio metric: ΣX/ΣY with the delta-method se and lift se (bootstrap within 6%)', () => {
    const c = momentsOf(ratio.control.x, { y: ratio.control.y });
    const t = momentsOf(ratio.treatment.x, { y: ratio.treatment.y });
    const v = armValue(c, 'ratio');
    expect(v.value).toBeCloseTo(c.sumX / c.sumY!, 12);
    expect(close(v.se!, ref.ratioBootSd, 0.06), `${v.se} vs ${ref.ratioBootSd}`).toBe(true);
    const r = compareArms(c, t, { kind: 'ratio', direction: 'decrease', cuped: true });
    const se = (r.ci!.high - r.ci!.low) / (2 * 1.959963984540054);
    expect(close(se, ref.ratioLiftBootSd, 0.06), `${se} vs ${ref.ratioLiftBootSd}`).toBe(true);
    // CUPED is asked for but never applied to a ratio, and the rule says so.
    expect(r.cuped).toEqual({ applied: false, varianceReduction: null, theta: null });
    expect(r.rule).toMatch(/^CUPED is not applied to ratio metrics/);
  });

  it('a worked delta-method example: units (x, y) = (2, 1), (3, 2), (10, 4), (5, 3)', () => {
    // x̄ = 5, ȳ = 2.5, r = ΣX/ΣY = 2.
    const m: ArmMoments = { units: 4, sumX: 20, sumX2: 4 + 9 + 100 + 25, sumY: 10, sumY2: 1 + 4 + 16 + 9, sumXY: 2 + 6 + 40 + 15 };
    // var x = (138 − 100)/3 = 38/3; var y = (30 − 25)/3 = 5/3; cov = (63 − 50)/3 = 13/3.
    // var_r·n·ȳ² = 38/3 − 2·2·13/3 + 4·5/3 = (38 − 52 + 20)/3 = 2 → se = √(2 / (4 · 6.25)) = √0.08.
    const v = armValue(m, 'ratio');
    expect(v.value).toBe(2);
    expect(v.se).toBeCloseTo(Math.sqrt(0.08), 14);
  });

  it('CUPED equals OLS: the difference is the arm coefficient, θ the covariate one, the variance reduction 1 − SSR ratio', () => {
    const c = momentsOf(cupedControl.x, { c: cupedControl.c });
    const t = momentsOf(cupedTreatment.x, { c: cupedTreatment.c });
    const theta = pooledCupedTheta([c, t])!;
    expect(close(theta, ref.ancova.theta, 1e-9)).toBe(true);
    const r = compareArms(c, t, { kind: 'mean', direction: 'increase', cuped: true });
    expect(r.cuped.applied).toBe(true);
    expect(close(r.cuped.theta!, ref.ancova.theta, 1e-9)).toBe(true);
    expect(close(r.difference!, ref.ancova.difference, 1e-8), `${r.difference} vs ${ref.ancova.difference}`).toBe(true);
    expect(close(r.cuped.varianceReduction!, ref.ancova.reduction, 1e-9)).toBe(true);
    expect(r.cuped.varianceReduction!).toBeGreaterThan(0.6);
    // The same data without CUPED: a wider interval around a noisier estimate.
    const plain = compareArms(c, t, { kind: 'mean', direction: 'increase' });
    expect(plain.ci!.high - plain.ci!.low).toBeGreaterThan((r.ci!.high - r.ci!.low) * 1.5);
    // A θ pooled over more arms by the caller is used as given.
    expect(compareArms(c, t, { kind: 'mean', direction: 'increase', cuped: true, theta: 0.5 }).cuped.theta).toBe(0.5);
  });

  it('chance to win is the flat-prior posterior probability (Monte Carlo, 2M draws: within 0.005)', () => {
    // Arms whose value and se are the posterior's mean and sd: binomial moments of n units with p successes.
    const arm = (p: number, se: number): ArmMoments => {
      const n = Math.round((p * (1 - p)) / (se * se)) + 1;
      return { units: n, sumX: p * n, sumX2: p * n };
    };
    const c = arm(posterior.control[0]!, posterior.control[1]!);
    const t = arm(posterior.treatment[0]!, posterior.treatment[1]!);
    const r = compareArms(c, t, { kind: 'binomial', direction: 'increase' });
    expect(Math.abs(r.chanceToWin! - ref.chanceToWin)).toBeLessThan(0.005);
    const down = compareArms(c, t, { kind: 'binomial', direction: 'decrease' });
    expect(down.chanceToWin! + r.chanceToWin!).toBeCloseTo(1, 12);
  });
});

describe('bounds and the minimum sample', () => {
  it('a relative lift interval never goes below −1, nor a rate’s above 1/c − 1', () => {
    const r = compareArms({ units: 100, sumX: 2, sumX2: 2 }, { units: 100, sumX: 0, sumX2: 0 }, { kind: 'binomial', direction: 'increase', sequentialTuningUnits: 10_000 });
    expect(r.relativeLift).toBe(-1);
    expect(r.ci!.low).toBeGreaterThanOrEqual(-1);
    expect(r.sequentialCi!.low).toBeGreaterThanOrEqual(-1);
    const up = compareArms({ units: 100, sumX: 95, sumX2: 95 }, { units: 100, sumX: 100, sumX2: 100 }, { kind: 'binomial', direction: 'increase', sequentialTuningUnits: 10_000 });
    expect(up.ci!.high).toBeLessThanOrEqual(1 / 0.95 - 1 + 1e-15);
    expect(up.sequentialCi!.high).toBeLessThanOrEqual(1 / 0.95 - 1 + 1e-15);
  });

  it(`no better / worse below ${MIN_UNITS_PER_ARM} units per arm, whatever the effect; the rule says why`, () => {
    const few = compareArms({ units: MIN_UNITS_PER_ARM - 1, sumX: 0, sumX2: 0 }, { units: 500, sumX: 500, sumX2: 500 }, { kind: 'binomial', direction: 'increase' });
    expect(few.verdict).toBe('too-few-units');
    expect(few.rule).toBe(`too-few-units: no better / worse until both arms have ≥ ${MIN_UNITS_PER_ARM} units (control ${MIN_UNITS_PER_ARM - 1}, treatment 500)`);
    const one = compareArms({ units: 1, sumX: 0, sumX2: 0 }, { units: 1, sumX: 1, sumX2: 1 }, { kind: 'binomial', direction: 'increase' });
    expect(one).toMatchObject({ verdict: 'too-few-units', ci: null, pValue: null });
    const enough = compareArms({ units: MIN_UNITS_PER_ARM, sumX: 10, sumX2: 10 }, { units: MIN_UNITS_PER_ARM, sumX: 60, sumX2: 60 }, { kind: 'binomial', direction: 'increase' });
    expect(enough.verdict).toBe('better');
    expect(enough.rule).toBe(`better: the 95% interval of the relative lift lies wholly above 0 (increase is good) and both arms have ≥ ${MIN_UNITS_PER_ARM} units`);
  });

  it('the verdict follows the always-valid interval when the experiment is sequential', () => {
    // A lift the fixed-horizon interval calls better but the confidence sequence (tuned for 20 000 units) does not.
    const c = { units: 3000, sumX: 900, sumX2: 900 };
    const t = { units: 3000, sumX: 990, sumX2: 990 };
    const fixed = compareArms(c, t, { kind: 'binomial', direction: 'increase' });
    const watched = compareArms(c, t, { kind: 'binomial', direction: 'increase', sequentialTuningUnits: 20_000 });
    expect(fixed.verdict).toBe('better');
    expect(watched.verdict).toBe('inconclusive');
    expect(watched.sequentialCi!.low).toBeLessThan(0);
    expect(watched.rule).toBe('inconclusive: the always-valid 95% interval of the relative lift includes 0');
    expect(watched.ci).toEqual(fixed.ci);
  });
});
