/**
 * The distributions and tests of `lib/shared/statistics` against scipy 1.17 and statsmodels 0.15 in a real python3:
 * log-gamma (`gammaln`), the normal cdf (and mpmath at 40 digits) and quantile, Student's t cdf and quantile, the
 * chi-squared survival function (df 1..10, x up to 1300, tails below 1e-250), Wilson (statsmodels
 * `proportion_confint(method='wilson')`), Holm and Benjamini–Hochberg (`multipletests`), power and sample size
 * (`NormalIndPower`) and the sample-ratio check (`scipy.stats.chisquare`). Tolerances are stated per test.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  Z95,
  benjaminiHochbergAdjust,
  chiSquaredSurvival,
  holmAdjust,
  logGamma,
  normalCdf,
  normalQuantile,
  powerAt,
  sampleRatioMismatch,
  studentTCdf,
  studentTQuantile,
  unitsPerArm,
  wilsonInterval,
} from '../../../lib/shared/statistics/index.ts';
import { ValidationError } from '../../../lib/errors.ts';
import { close, pythonReference } from './support/reference.ts';
import { mulberry32 } from '../../../lib/shared/seeded-random.ts';

const SCRIPT = String.raw`
import json, sys, math
import numpy as np
from scipy import stats
from statsmodels.stats.proportion import proportion_confint
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import NormalIndPower
c = json.load(sys.stdin)
out = {}
from scipy.special import gammaln
out['gammaln'] = [float(gammaln(x)) for x in c['gammaln']]
out['cdf'] = [float(stats.norm.cdf(x)) for x in c['cdf']]
import mpmath
mpmath.mp.dps = 40
out['cdfExact'] = [float(mpmath.ncdf(x)) for x in c['cdf']]
out['ppf'] = [float(stats.norm.ppf(p)) for p in c['ppf']]
out['chi2'] = [float(stats.chi2.sf(x, df)) for x, df in c['chi2']]
out['tcdf'] = [float(stats.t.cdf(x, df)) for x, df in c['tcdf']]
out['tppf'] = [float(stats.t.ppf(p, df)) for p, df in c['tppf']]
out['wilson'] = [list(map(float, proportion_confint(k, n, alpha=a, method='wilson'))) for k, n, a in c['wilson']]
out['holm'] = [list(map(float, multipletests(ps, method='holm')[1])) for ps in c['family']]
out['bh'] = [list(map(float, multipletests(ps, method='fdr_bh')[1])) for ps in c['family']]
def design(d):
    p, m = d['baselineMean'], d['mde']
    if d['kind'] == 'binomial':
        q = p * (1 + m)
        sd = math.sqrt((p * (1 - p) + q * (1 - q)) / 2)
    else:
        sd = d['baselineSd']
    return abs(p * m) / sd
out['n'] = [int(math.ceil(NormalIndPower().solve_power(effect_size=design(d), alpha=d['alpha'], power=d['power'], ratio=1, alternative='two-sided'))) for d in c['designs']]
out['power'] = [float(NormalIndPower().power(effect_size=design(d), nobs1=d['at'], alpha=d['alpha'], ratio=1, alternative='two-sided')) for d in c['designs']]
srm = []
for o, e in c['srm']:
    e = np.array(e, dtype=float); o = np.array(o, dtype=float)
    r = stats.chisquare(o, e / e.sum() * o.sum())
    srm.append([float(r.statistic), float(r.pvalue)])
out['srm'] = srm
print(json.dumps(out))
`;

const rnd = mulberry32(14);
const GAMMALN = [1e-300, 1e-8, 0.1, 0.5, 1, 1.5, 2, 2.5, 7.3, 14.999, 15, 15.5, 50, 1234.5, 1e6, 1e12];
const CDF = [-37, -30, -20, -10, -8.3, -5, -3.2, -1.96, -1, -0.5, -1e-3, 0, 1e-3, 0.25, 1, 1.644, 2.5, 5, 8, 9];
const PPF = [1e-300, 1e-100, 1e-20, 1e-10, 1e-6, 0.001, 0.01, 0.02425, 0.025, 0.05, 0.1, 0.3, 0.5, 0.7, 0.9, 0.95, 0.975, 0.99, 0.999, 1 - 1e-9];
const CHI2: Array<[number, number]> = [];
for (let df = 1; df <= 10; df++) for (const x of [1e-8, 0.01, 0.3, 1, df - 0.5, df, df + 1, 2 * df, 10, 20.5, 50, 100, 300, 700, 1000, 1300]) CHI2.push([x, df]);
CHI2.push([3.841458820694124, 1], [5.991464547107979, 2], [12, 25], [60, 40], [5, 60]);
const TCDF: Array<[number, number]> = [];
const TPPF: Array<[number, number]> = [];
for (const df of [1, 2, 2.5, 3, 4.7, 9, 19, 30, 99, 1000, 40_000, 2e6]) {
  for (const x of [-300, -40, -6, -2.5, -1, -0.1, 0, 0.3, 1.7, 3, 12]) TCDF.push([x, df]);
  for (const p of [1e-12, 1e-6, 0.001, 0.025, 0.2, 0.5, 0.8, 0.975, 0.995, 1 - 1e-9]) TPPF.push([p, df]);
}
const WILSON: Array<[number, number, number]> = [
  [0, 1, 0.05], [1, 1, 0.05], [0, 20, 0.05], [8, 10, 0.05], [20, 20, 0.05], [1, 50, 0.05], [37, 100, 0.1], [4999, 10_000, 0.01], [3, 1_000_000, 0.05],
];
const FAMILY: number[][] = [
  [0.01, 0.04, 0.03],
  [0.001, 0.5, 0.02, 0.049, 0.2, 0.0001],
  [0.9, 0.95, 0.99],
  Array.from({ length: 40 }, () => rnd() ** 3),
];
const DESIGNS = [
  { kind: 'binomial', mde: 0.1, baselineMean: 0.3, alpha: 0.05, power: 0.8, at: 3000 },
  { kind: 'binomial', mde: 0.02, baselineMean: 0.05, alpha: 0.05, power: 0.9, at: 500_000 },
  { kind: 'binomial', mde: 0.2, baselineMean: 0.6, alpha: 0.01, power: 0.8, at: 400 },
  { kind: 'mean', mde: 0.05, baselineMean: 12, baselineSd: 30, alpha: 0.05, power: 0.8, at: 10_000 },
  { kind: 'ratio', mde: 0.03, baselineMean: 850, baselineSd: 400, alpha: 0.1, power: 0.95, at: 2_000 },
  { kind: 'mean', mde: 2, baselineMean: 1, baselineSd: 1, alpha: 0.05, power: 0.8, at: 3 },
] as const;
const SRM: Array<[number[], number[]]> = [
  [[5000, 4850], [0.5, 0.5]],
  [[5000, 4700], [1, 1]],
  [[1000, 2100, 2950], [1, 2, 3]],
  [[50_000, 48_500], [0.5, 0.5]],
  [[50_000, 48_500, 50_100, 49_900], [0.25, 0.25, 0.25, 0.25]],
  [[7, 3], [0.5, 0.5]],
];

interface Reference {
  gammaln: number[];
  cdf: number[];
  cdfExact: number[];
  ppf: number[];
  chi2: number[];
  tcdf: number[];
  tppf: number[];
  wilson: Array<[number, number]>;
  holm: number[][];
  bh: number[][];
  n: number[];
  power: number[];
  srm: Array<[number, number]>;
}
let ref: Reference;
beforeAll(() => {
  ref = pythonReference<Reference>(SCRIPT, { gammaln: GAMMALN, cdf: CDF, ppf: PPF, chi2: CHI2, tcdf: TCDF, tppf: TPPF, wilson: WILSON, family: FAMILY, designs: DESIGNS, srm: SRM });
});

describe('log-gamma (scipy.special.gammaln)', () => {
  it('matches to 1e-14 relative (2e-15 absolute near its zeros at 1 and 2)', () => {
    const bad = GAMMALN.map((x, i) => ({ x, ours: logGamma(x), scipy: ref.gammaln[i]! })).filter((r) => !close(r.ours, r.scipy, 1e-14, 5e-15));
    expect(bad).toEqual([]);
  });
});

describe('normal distribution (scipy.stats.norm)', () => {
  it('cdf to 1e-13 relative of mpmath at 40 digits and 1e-12 of scipy (whose far tail drifts by 1e-13), tails to 1e-300', () => {
    const bad = CDF.map((x, i) => ({ x, ours: normalCdf(x), scipy: ref.cdf[i]!, exact: ref.cdfExact[i]! })).filter((r) => !close(r.ours, r.exact, 1e-13, 1e-320) || !close(r.ours, r.scipy, 1e-12, 1e-320));
    expect(bad).toEqual([]);
    expect(ref.cdf[0]).toBeGreaterThan(0); // the far tail really is tested, not 0 = 0
  });

  it('quantile to 1e-13 relative, and Z95 is Φ⁻¹(0.975)', () => {
    const bad = PPF.map((p, i) => ({ p, ours: normalQuantile(p), scipy: ref.ppf[i]! })).filter((r) => !close(r.ours, r.scipy, 1e-13, 1e-15));
    expect(bad).toEqual([]);
    expect(Z95).toBe(ref.ppf[PPF.indexOf(0.975)]);
    expect([normalQuantile(0), normalQuantile(1), normalQuantile(1.5)]).toEqual([-Infinity, Infinity, NaN]);
  });
});

describe('chi-squared survival (scipy.stats.chi2.sf)', () => {
  it(`matches over df 1..10 and x up to 1300 to 1e-11 relative (${CHI2.length} cases)`, () => {
    const bad = CHI2.map(([x, df], i) => ({ x, df, ours: chiSquaredSurvival(x, df), scipy: ref.chi2[i]! })).filter((r) => !close(r.ours, r.scipy, 1e-11, 1e-300));
    expect(bad).toEqual([]);
    // The grid reaches deep tails (1e-280 and below), which the comparison above held to relative precision.
    expect(Math.min(...ref.chi2.filter((p) => p > 0))).toBeLessThan(1e-250);
    expect(chiSquaredSurvival(0, 3)).toBe(1);
  });
});

describe("Student's t (scipy.stats.t)", () => {
  it(`cdf and quantile over df 1..2e6 (${TCDF.length} + ${TPPF.length} cases) to 1e-10 relative (1e-9 beyond 1e5 df)`, () => {
    // Beyond 1e5 degrees of freedom the continued fraction runs ~√ν terms and its rounding reaches 1e-10.
    const badCdf = TCDF.map(([x, df], i) => ({ x, df, ours: studentTCdf(x, df), scipy: ref.tcdf[i]! })).filter((r) => !close(r.ours, r.scipy, r.df > 1e5 ? 1e-9 : 1e-10, 1e-300));
    expect(badCdf).toEqual([]);
    const badPpf = TPPF.map(([p, df], i) => ({ p, df, ours: studentTQuantile(p, df), scipy: ref.tppf[i]! })).filter((r) => !close(r.ours, r.scipy, 1e-10, 1e-14));
    expect(badPpf).toEqual([]);
  });
});

describe('Wilson interval (statsmodels proportion_confint, method wilson)', () => {
  it('matches to 1e-12 and stays inside [0, 1]', () => {
    WILSON.forEach(([k, n, a], i) => {
      const w = wilsonInterval(k, n, normalQuantile(1 - a / 2));
      const [low, high] = ref.wilson[i]!;
      expect(close(w.low, Math.max(0, low), 1e-12, 1e-15), `${k}/${n} low ${w.low} vs ${low}`).toBe(true);
      expect(close(w.high, Math.min(1, high), 1e-12, 1e-15), `${k}/${n} high ${w.high} vs ${high}`).toBe(true);
      expect(w.low).toBeGreaterThanOrEqual(0);
      expect(w.high).toBeLessThanOrEqual(1);
    });
  });
});

describe('multiple testing (statsmodels multipletests)', () => {
  it('Holm and Benjamini–Hochberg to 1e-14, nulls kept out of the family', () => {
    FAMILY.forEach((ps, i) => {
      holmAdjust(ps).forEach((p, j) => expect(close(p!, ref.holm[i]![j]!, 1e-14, 1e-16), `holm ${i}/${j}`).toBe(true));
      benjaminiHochbergAdjust(ps).forEach((p, j) => expect(close(p!, ref.bh[i]![j]!, 1e-14, 1e-16), `bh ${i}/${j}`).toBe(true));
    });
    // A null is not a test: the family of [0.01, 0.04, 0.03] adjusted with a null beside it is the same family.
    const holm = holmAdjust([0.01, null, 0.04, 0.03]);
    expect(holm[1]).toBeNull();
    [holm[0], holm[2], holm[3]].forEach((p, j) => expect(close(p!, ref.holm[0]![j]!, 1e-14)).toBe(true));
    const bh = benjaminiHochbergAdjust([null, 0.01, 0.04, 0.03]);
    expect(bh[0]).toBeNull();
    bh.slice(1).forEach((p, j) => expect(close(p!, ref.bh[0]![j]!, 1e-14)).toBe(true));
  });
});

describe('power (statsmodels NormalIndPower, two-sided, equal arms)', () => {
  it('units per arm equal ceil(solve_power) and power at n matches to 1e-10', () => {
    DESIGNS.forEach((d, i) => {
      expect(unitsPerArm(d), `design ${i}`).toBe(ref.n[i]);
      expect(close(powerAt({ ...d, unitsPerArm: d.at }), ref.power[i]!, 1e-10), `power ${i}`).toBe(true);
    });
  });

  it('refuses a design that cannot be, naming the field', () => {
    const issue = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e instanceof ValidationError ? e.issues[0]?.path : String(e);
      }
      return 'no error';
    };
    expect(issue(() => unitsPerArm({ kind: 'mean', mde: 0.1, baselineMean: 3 }))).toBe('power.baselineSd');
    expect(issue(() => unitsPerArm({ kind: 'binomial', mde: 1, baselineMean: 0.6 }))).toBe('power.mde');
    expect(issue(() => unitsPerArm({ kind: 'binomial', mde: 0.1, baselineMean: 1.2 }))).toBe('power.baselineMean');
    expect(issue(() => unitsPerArm({ kind: 'ratio', mde: 0.1, baselineMean: 0, baselineSd: 1 }))).toBe('power.baselineMean');
  });
});

describe('sample-ratio mismatch (scipy.stats.chisquare)', () => {
  it('chi-squared and p match to 1e-11; mismatch exactly when p < 0.001', () => {
    SRM.forEach(([observed, shares], i) => {
      const arms = observed.map((_, j) => `arm-${j}`);
      const r = sampleRatioMismatch(Object.fromEntries(arms.map((a, j) => [a, observed[j]!])), Object.fromEntries(arms.map((a, j) => [a, shares[j]!])));
      const [chi, p] = ref.srm[i]!;
      expect(close(r.chiSquared!, chi, 1e-11), `chi ${i}`).toBe(true);
      expect(close(r.pValue!, p, 1e-11, 1e-300), `p ${i}: ${r.pValue} vs ${p}`).toBe(true);
      expect(r.mismatch).toBe(p < 0.001);
    });
    // One arm dropping 3% of 50 000 units is caught; 5000 vs 4850 is not.
    expect(ref.srm[3]![1]).toBeLessThan(0.001);
    expect(ref.srm[0]![1]).toBeGreaterThan(0.001);
  });

  it('a stopped arm (share 0) is left out, and nothing to test answers nulls', () => {
    const r = sampleRatioMismatch({ a: 5000, b: 4990, c: 12 }, { a: 0.5, b: 0.5, c: 0 });
    expect(r).toEqual(sampleRatioMismatch({ a: 5000, b: 4990 }, { a: 1, b: 1 }));
    expect(sampleRatioMismatch({ a: 0, b: 0 }, { a: 1, b: 1 })).toEqual({ chiSquared: null, pValue: null, mismatch: false });
    expect(sampleRatioMismatch({ a: 10 }, { a: 1 })).toEqual({ chiSquared: null, pValue: null, mismatch: false });
  });
});
