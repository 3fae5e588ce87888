/**
 * Agreement statistics against known values: scikit-learn in a real python3 process (kappa, confusion matrix,
 * precision/recall, accuracy, the logistic slope) on random and hand-made label sets, Krippendorff's alpha against the
 * worked examples of Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", and the bootstrap's intervals.
 */
import { execFileSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  accuracy,
  alphaFromCounts,
  cohenKappa,
  confusionMatrix,
  kappaFromCounts,
  krippendorffAlpha,
  labelOrder,
  perClassMetrics,
} from '../../lib/judges/calibration/agreement.ts';
import { bootstrapAgreement, percentileSorted, seededRandom } from '../../lib/judges/calibration/bootstrap.ts';
import { lengthBias, logisticSlope } from '../../lib/judges/calibration/length-bias.ts';

const SKLEARN = String.raw`
import json, sys, warnings
import numpy as np
from sklearn.metrics import cohen_kappa_score, confusion_matrix, precision_recall_fscore_support, accuracy_score
from sklearn.linear_model import LogisticRegression
warnings.simplefilter('ignore')
req = json.load(sys.stdin)
def num(x):
    x = float(x)
    return None if np.isnan(x) else x
out = {'cases': [], 'slopes': []}
for c in req['cases']:
    a, b, labels = c['a'], c['b'], c['labels']
    p, r, _, s = precision_recall_fscore_support(a, b, labels=labels, zero_division=np.nan)
    out['cases'].append({
        'kappa': num(cohen_kappa_score(a, b)),
        'confusion': confusion_matrix(a, b, labels=labels).tolist(),
        'precision': [num(v) for v in p], 'recall': [num(v) for v in r], 'support': [int(v) for v in s],
        'accuracy': float(accuracy_score(a, b)),
    })
for s in req['slopes']:
    x = np.array(s['x'], dtype=float)
    y = np.array(s['y'])
    if s['groups'] is None:
        m = LogisticRegression(C=1.0, tol=1e-12, max_iter=100000).fit(x.reshape(-1, 1), y)
    else:
        g = np.array(s['groups'])
        onehot = (g[:, None] == np.arange(g.max() + 1)[None, :]).astype(float)
        m = LogisticRegression(C=np.inf, fit_intercept=False, tol=1e-12, max_iter=100000).fit(np.hstack([onehot, x[:, None]]), y)
    out['slopes'].append(float(m.coef_[0][-1]))
json.dump(out, sys.stdout)
`;

interface SkCase {
  kappa: number | null;
  confusion: number[][];
  precision: (number | null)[];
  recall: (number | null)[];
  support: number[];
  accuracy: number;
}

function randomLabels(seed: number, n: number, classes: readonly string[], weights: readonly number[]): string[] {
  const next = seededRandom(seed);
  const total = weights.reduce((s, w) => s + w, 0);
  return Array.from({ length: n }, () => {
    let u = (next() / 4294967296) * total;
    for (let i = 0; i < classes.length; i++) if ((u -= weights[i]!) < 0) return classes[i]!;
    return classes[classes.length - 1]!;
  });
}

/** A judge that copies gold and, with probability p, replaces it by another class drawn uniformly. */
function noisy(seed: number, gold: readonly string[], classes: readonly string[], p: number): string[] {
  const next = seededRandom(seed);
  return gold.map((g) => {
    if (next() / 4294967296 >= p) return g;
    const others = classes.filter((c) => c !== g);
    return others[Math.floor((next() / 4294967296) * others.length)]!;
  });
}

const V = ['pass', 'fail', 'not-applicable'] as const;
const CASES: { name: string; a: string[]; b: string[] }[] = [];
{
  const g1 = randomLabels(11, 300, ['pass', 'fail'], [0.6, 0.4]);
  CASES.push({ name: 'binary, 10% noise', a: g1, b: noisy(12, g1, ['pass', 'fail'], 0.1) });
  const g2 = randomLabels(21, 500, V, [0.5, 0.35, 0.15]);
  CASES.push({ name: 'three classes, 30% noise', a: g2, b: noisy(22, g2, V, 0.3) });
  const g3 = randomLabels(31, 400, ['pass', 'fail'], [0.95, 0.05]);
  CASES.push({ name: 'imbalanced, 5% noise', a: g3, b: noisy(32, g3, ['pass', 'fail'], 0.05) });
  CASES.push({ name: 'independent raters', a: randomLabels(41, 250, ['a', 'b', 'tie'], [1, 1, 1]), b: randomLabels(42, 250, ['a', 'b', 'tie'], [1, 1, 1]) });
  CASES.push({ name: 'hand-made: worse than chance', a: ['pass', 'pass', 'fail', 'fail'], b: ['fail', 'fail', 'pass', 'pass'] });
  CASES.push({ name: 'hand-made: judge never says fail', a: ['pass', 'fail', 'pass', 'fail', 'pass'], b: ['pass', 'pass', 'pass', 'pass', 'pass'] });
  CASES.push({ name: 'hand-made: perfect', a: ['yes', 'no', 'yes'], b: ['yes', 'no', 'yes'] });
  CASES.push({ name: 'hand-made: one class only (undefined)', a: ['pass', 'pass', 'pass'], b: ['pass', 'pass', 'pass'] });
  CASES.push({ name: 'hand-made: unknown labels sort after known', a: ['zeta', 'pass', 'alpha', 'pass'], b: ['alpha', 'pass', 'alpha', 'fail'] });
}

const SLOPES: { name: string; groups: number[] | null; x: number[]; y: number[] }[] = [];
{
  const next = seededRandom(77);
  const u = () => next() / 4294967296;
  const normal = () => Math.sqrt(-2 * Math.log(u() || 1e-12)) * Math.cos(2 * Math.PI * u());
  const x1 = Array.from({ length: 400 }, normal);
  SLOPES.push({ name: 'one group, slope 1.2', groups: null, x: x1, y: x1.map((x) => (u() < 1 / (1 + Math.exp(-(0.3 + 1.2 * x))) ? 1 : 0)) });
  const g2 = Array.from({ length: 600 }, (_, i) => i % 3);
  const x2 = Array.from({ length: 600 }, normal);
  const base = [-1, 0.5, 1.5];
  SLOPES.push({ name: 'three groups, slope −0.7', groups: g2, x: x2, y: x2.map((x, i) => (u() < 1 / (1 + Math.exp(-(base[g2[i]!]! - 0.7 * x))) ? 1 : 0)) });
}

let sk: { cases: SkCase[]; slopes: number[] };
beforeAll(() => {
  const input = JSON.stringify({
    cases: CASES.map((c) => ({ a: c.a, b: c.b, labels: labelOrder([...c.a, ...c.b]) })),
    slopes: SLOPES.map((s) => ({ groups: s.groups, x: s.x, y: s.y })),
  });
  sk = JSON.parse(execFileSync('python3', ['-c', SKLEARN], { input, encoding: 'utf8', timeout: 60_000 })) as typeof sk;
});

describe('agreement against scikit-learn', () => {
  it.each(CASES.map((c, i) => [c.name, i] as const))('%s', (_name, i) => {
    const c = CASES[i]!;
    const want = sk.cases[i]!;
    const kappa = cohenKappa(c.a, c.b);
    if (want.kappa === null) expect(kappa).toBeNull();
    else expect(kappa).toBeCloseTo(want.kappa, 12);
    const confusion = confusionMatrix(c.a, c.b);
    expect(confusion.matrix).toEqual(want.confusion);
    const per = perClassMetrics(confusion);
    confusion.labels.forEach((label, j) => {
      const got = per[label]!;
      for (const [g, w] of [[got.precision, want.precision[j]], [got.recall, want.recall[j]]] as const) {
        if (w === null) expect(g).toBeNull();
        else expect(g).toBeCloseTo(w!, 12);
      }
      expect(got.support).toBe(want.support[j]);
    });
    expect(accuracy(confusion)).toBeCloseTo(want.accuracy, 12);
  });

  it('orders labels stably: known verdicts canonically, then the rest sorted', () => {
    expect(labelOrder(['zeta', 'fail', 'alpha', 'pass', 'fail'])).toEqual(['pass', 'fail', 'alpha', 'zeta']);
    expect(confusionMatrix(['b', 'a'], ['tie', 'a']).labels).toEqual(['a', 'b', 'tie']);
  });

  it('refuses raters of different lengths', () => {
    expect(() => cohenKappa(['pass'], ['pass', 'fail'])).toThrow(RangeError);
  });

  it.each(SLOPES.map((s, i) => [s.name, i] as const))('logistic slope matches LogisticRegression: %s', (_name, i) => {
    const s = SLOPES[i]!;
    const got = s.groups === null ? logisticSlope(s.x.map(() => 0), s.x, s.y, { l2: 1 }) : logisticSlope(s.groups, s.x, s.y, { l2: 0 });
    expect(got).toBeCloseTo(sk.slopes[i]!, 5);
  });
});

describe("Krippendorff's alpha, nominal", () => {
  it('reproduces the worked example with missing data (4 observers, 12 units): 0.743', () => {
    const _ = null;
    const data = [
      [1, 2, 3, 3, 2, 1, 4, 1, 2, _, _, _],
      [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, _, 3],
      [_, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, _],
      [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, _],
    ].map((row) => row.map((v) => (v === null ? null : String(v))));
    expect(krippendorffAlpha(data)).toBeCloseTo(0.743, 3);
  });

  it('reproduces the two-observer examples: binary 0.095, nominal 0.692', () => {
    const binary = [
      [0, 1, 0, 0, 0, 0, 0, 0, 1, 0],
      [1, 1, 1, 0, 0, 1, 0, 0, 0, 0],
    ].map((row) => row.map(String));
    expect(krippendorffAlpha(binary)).toBeCloseTo(0.095, 3);
    const nominal = [
      ['a', 'a', 'b', 'b', 'd', 'c', 'c', 'c', 'e', 'd', 'd', 'a'],
      ['b', 'a', 'b', 'b', 'b', 'c', 'c', 'c', 'e', 'd', 'd', 'd'],
    ];
    expect(krippendorffAlpha(nominal)).toBeCloseTo(0.692, 3);
  });

  it('equals the count-matrix form for two raters with no missing values', () => {
    for (const c of CASES.slice(0, 4)) {
      const confusion = confusionMatrix(c.a, c.b);
      const k = confusion.labels.length;
      const counts = confusion.matrix.flat();
      expect(alphaFromCounts(counts, k)).toBeCloseTo(krippendorffAlpha([c.a, c.b])!, 12);
    }
  });

  it('is undefined without variation or pairable values', () => {
    expect(krippendorffAlpha([['x', 'x'], ['x', 'x']])).toBeNull();
    expect(krippendorffAlpha([['x', null], [null, 'y']])).toBeNull();
  });
});

describe('seeded bootstrap', () => {
  function cellsOf(a: readonly string[], b: readonly string[]): { cells: Int32Array; k: number; kappa: number } {
    const labels = labelOrder([...a, ...b]);
    const k = labels.length;
    const cells = Int32Array.from(a, (x, i) => labels.indexOf(x) * k + labels.indexOf(b[i]!));
    const counts = new Float64Array(k * k);
    for (const c of cells) counts[c]!++;
    return { cells, k, kappa: kappaFromCounts(counts, k)! };
  }

  it('gives an interval that contains the estimate, reproducibly by seed', () => {
    const c = CASES[1]!;
    const { cells, k, kappa } = cellsOf(c.a, c.b);
    const first = bootstrapAgreement({ cells, k, resamples: 1000, seed: 5 });
    const again = bootstrapAgreement({ cells, k, resamples: 1000, seed: 5 });
    const other = bootstrapAgreement({ cells, k, resamples: 1000, seed: 6 });
    expect(first).toEqual(again);
    expect(other.kappa!.low).not.toBe(first.kappa!.low);
    expect(first.kappa!.low).toBeLessThan(kappa);
    expect(first.kappa!.high).toBeGreaterThan(kappa);
    expect(first.kappa!.defined).toBe(1000);
    const alpha = krippendorffAlpha([c.a, c.b])!;
    expect(first.alpha!.low).toBeLessThan(alpha);
    expect(first.alpha!.high).toBeGreaterThan(alpha);
  });

  it('draws exactly what a plain loop over seededRandom draws', () => {
    const c = CASES[0]!;
    const { cells, k } = cellsOf(c.a, c.b);
    const next = seededRandom(13);
    const kappas: number[] = [];
    for (let r = 0; r < 200; r++) {
      const counts = new Float64Array(k * k);
      for (let i = 0; i < cells.length; i++) counts[cells[Math.floor((next() * cells.length) / 4294967296)]!]!++;
      kappas.push(kappaFromCounts(counts, k)!);
    }
    kappas.sort((x, y) => x - y);
    const boot = bootstrapAgreement({ cells, k, resamples: 200, seed: 13 }).kappa!;
    expect(boot.low).toBe(percentileSorted(kappas, 2.5));
    expect(boot.high).toBe(percentileSorted(kappas, 97.5));
  });

  it('narrows as n grows, about as 1/√n, and matches the asymptotic standard error', () => {
    const widths: number[] = [];
    for (const n of [100, 1600]) {
      const gold = randomLabels(100 + n, n, ['pass', 'fail'], [0.5, 0.5]);
      const judge = noisy(200 + n, gold, ['pass', 'fail'], 0.15);
      const { cells, k, kappa } = cellsOf(gold, judge);
      const boot = bootstrapAgreement({ cells, k, resamples: 2000, seed: 9 })!.kappa!;
      widths.push(boot.high - boot.low);
      // Large-sample SE of kappa (two classes): sqrt(po(1−po)/(n(1−pe)²)); the 95% interval is about ±1.96 SE.
      const po = cells.reduce((s, c) => s + (c === 0 || c === 3 ? 1 : 0), 0) / n;
      const pe = po === 1 ? 0 : (po - kappa) / (1 - kappa);
      const se = Math.sqrt((po * (1 - po)) / (n * (1 - pe) ** 2));
      expect((boot.high - boot.low) / (2 * 1.96 * se)).toBeGreaterThan(0.8);
      expect((boot.high - boot.low) / (2 * 1.96 * se)).toBeLessThan(1.25);
    }
    expect(widths[0]! / widths[1]!).toBeGreaterThan(3);
    expect(widths[0]! / widths[1]!).toBeLessThan(5);
  });

  it('interpolates percentiles as numpy does', () => {
    expect(percentileSorted([1, 2, 3, 4], 50)).toBe(2.5);
    expect(percentileSorted([10, 20, 30, 40, 50], 2.5)).toBeCloseTo(11, 12);
  });

  it('runs 10,000 items × 1,000 resamples in well under a few seconds', () => {
    const gold = randomLabels(1, 10_000, V, [0.5, 0.3, 0.2]);
    const { cells, k } = cellsOf(gold, noisy(2, gold, V, 0.2));
    const started = performance.now();
    bootstrapAgreement({ cells, k, resamples: 1000, seed: 1 });
    expect(performance.now() - started).toBeLessThan(3000);
  });
});

describe('length bias', () => {
  it('is near 0 for a judge as swayed by length as gold, and positive for one that favours long answers', () => {
    const next = seededRandom(3);
    const u = () => next() / 4294967296;
    const rows = Array.from({ length: 800 }, (_, i) => {
      const length = 200 + Math.floor(u() * 4000);
      const gold = u() < 0.6 ? 'pass' : 'fail';
      return { id: i % 2 ? 'correctness' : 'style', length, gold, fair: u() < 0.1 ? (gold === 'pass' ? 'fail' : 'pass') : gold, biased: length > 3000 ? 'pass' : gold };
    });
    const fair = lengthBias(rows.map((r) => ({ id: r.id, length: r.length, gold: r.gold, judge: r.fair })))!;
    const biased = lengthBias(rows.map((r) => ({ id: r.id, length: r.length, gold: r.gold, judge: r.biased })))!;
    expect(Math.abs(fair.coefficient)).toBeLessThan(0.2);
    expect(biased.coefficient).toBeGreaterThan(0.5);
    expect(biased.n).toBe(800);
    expect(biased.coefficient).toBeCloseTo(biased.judgeSlope - biased.goldSlope, 12);
  });

  it('leaves out ties and not-applicable, and is undefined when every length is the same', () => {
    expect(lengthBias([{ id: 'x', length: 5, judge: 'pass', gold: 'fail' }, { id: 'x', length: 5, judge: 'fail', gold: 'pass' }])).toBeUndefined();
    const out = lengthBias([
      { id: 'preference', length: -300, judge: 'b', gold: 'b' },
      { id: 'preference', length: 400, judge: 'a', gold: 'b' },
      { id: 'preference', length: 100, judge: 'tie', gold: 'a' },
      { id: 'preference', length: 50, judge: 'a', gold: 'a' },
    ])!;
    expect(out.n).toBe(3);
  });
});
