import { describe, expect, it } from 'vitest';
import { calibration, multiLabelMetrics } from '../../../lib/modes/classifier/classification-metrics.ts';
import { chooseDecisionRule, decide } from '../../../lib/modes/classifier/decision-rule.ts';
import { chooseEscalationThreshold, MIN_ACCEPTED, topMargin } from '../../../lib/modes/classifier/escalation-threshold.ts';
import { decodeFloat32, encodeFloat32 } from '../../../lib/modes/classifier/float-codec.ts';
import { fitLogisticRegression, lbfgs } from '../../../lib/modes/classifier/logistic-regression.ts';
import { fitPlatt } from '../../../lib/modes/classifier/platt-calibration.ts';
import { fitTfidf, restoreTfidf, tokenize } from '../../../lib/modes/classifier/tfidf-vectorizer.ts';
import { signalText } from '../../../lib/modes/classifier/signal-text.ts';
import { mulberry32 as seededRandom } from '../../../lib/shared/seeded-random.ts';

const rng = seededRandom;

describe('lbfgs and logistic regression', () => {
  it('minimises a convex quadratic to its known optimum', () => {
    const target = [3, -2, 0.5];
    const w = new Float64Array(3);
    lbfgs(
      (x, g) => {
        let f = 0;
        for (let i = 0; i < 3; i++) {
          const d = x[i]! - target[i]!;
          f += (i + 1) * d * d;
          g[i] = 2 * (i + 1) * d;
        }
        return f;
      },
      w,
      { maxIterations: 100, tolerance: 1e-9 },
    );
    [...w].forEach((x, i) => expect(x).toBeCloseTo(target[i]!, 6));
  });

  it('recovers the generating weights of a logistic model and reaches a zero gradient', () => {
    const r = rng(7);
    const trueW = [2, -1.5];
    const trueB = -0.5;
    const rows: Int32Array[] = [];
    const values: Float32Array[] = [];
    const y: (0 | 1)[] = [];
    for (let i = 0; i < 4000; i++) {
      const x = [r() * 2 - 1, r() * 2 - 1];
      rows.push(Int32Array.from([0, 1]));
      values.push(Float32Array.from(x));
      const p = 1 / (1 + Math.exp(-(trueB + trueW[0]! * Math.fround(x[0]!) + trueW[1]! * Math.fround(x[1]!))));
      y.push(r() < p ? 1 : 0);
    }
    const fit = fitLogisticRegression({ rows, values, features: 2 }, y, { c: 1e6, tolerance: 1e-8 });
    expect(fit.weights[0]).toBeCloseTo(2, 0);
    expect(fit.weights[1]).toBeCloseTo(-1.5, 0);
    expect(fit.bias).toBeCloseTo(-0.5, 0);
    expect(Math.abs(fit.weights[0]! - 2)).toBeLessThan(0.25);
  });

  it('answers a constant model when a class is absent', () => {
    const x = { rows: [Int32Array.from([0])], values: [Float32Array.from([1])], features: 1 };
    expect(fitLogisticRegression(x, [0], { c: 1 }).bias).toBeLessThan(-5);
    expect(fitLogisticRegression(x, [1], { c: 1 }).bias).toBeGreaterThan(5);
  });
});

describe('fitPlatt', () => {
  it('recovers a known sigmoid from samples', () => {
    const r = rng(11);
    const z: number[] = [];
    const y: (0 | 1)[] = [];
    for (let i = 0; i < 20_000; i++) {
      const s = r() * 8 - 4;
      z.push(s);
      y.push(r() < 1 / (1 + Math.exp(-(1.5 * s - 1))) ? 1 : 0);
    }
    const { a, b } = fitPlatt(z, y);
    expect(Math.abs(a - 1.5)).toBeLessThan(0.1);
    expect(Math.abs(b + 1)).toBeLessThan(0.1);
  });

  it('is the identity when one class is missing', () => {
    expect(fitPlatt([1, 2], [0, 0])).toEqual({ a: 1, b: 0 });
  });
});

describe('decision rule, margin and escalation threshold', () => {
  it('names the top mode above the floor plus others above the extra threshold', () => {
    expect(decide([0.3, 0.1, 0.45], { topFloor: 0.25, extraThreshold: 0.4 })).toEqual([false, false, true]);
    expect(decide([0.42, 0.1, 0.45], { topFloor: 0.25, extraThreshold: 0.4 })).toEqual([true, false, true]);
    expect(decide([0.2, 0.1], { topFloor: 0.25, extraThreshold: 0.4 })).toEqual([false, false]);
  });

  it('chooses the rule that best fits validation data', () => {
    // Truth is always the top mode, and the top probability is low: a low floor and a high extra threshold win.
    const probs = [
      [0.3, 0.2, 0.1],
      [0.1, 0.35, 0.3],
      [0.05, 0.1, 0.28],
    ];
    const truth = [
      [true, false, false],
      [false, true, false],
      [false, false, true],
    ];
    const rule = chooseDecisionRule(probs, truth);
    expect(rule.microF1).toBe(1);
    expect(rule.topFloor).toBeLessThanOrEqual(0.25);
    expect(rule.extraThreshold).toBeGreaterThan(0.3);
  });

  it('measures the top-two margin', () => {
    expect(topMargin([0.1, 0.7, 0.4])).toBeCloseTo(0.3, 12);
    expect(topMargin([0.9])).toBeCloseTo(0.9, 12);
  });

  it('keeps the most items locally that still reach the target accuracy', () => {
    const points = [
      ...Array.from({ length: 10 }, (_, i) => ({ confidence: 0.9 - i * 0.01, correct: true })),
      { confidence: 0.75, correct: false },
      ...Array.from({ length: 4 }, (_, i) => ({ confidence: 0.7 - i * 0.01, correct: true })),
      ...Array.from({ length: 10 }, (_, i) => ({ confidence: 0.5 - i * 0.01, correct: i % 3 === 0 })),
    ];
    // Prefixes by confidence: 10/10, 10/11, 14/15, 15/16 (the 0.5 item is right), then 15/17 < 0.9 and never back.
    const c = chooseEscalationThreshold(points, 0.9);
    expect(c).toMatchObject({ reached: true, threshold: 0.5, acceptedAccuracy: 15 / 16 });
    expect(c.coverage).toBeCloseTo(16 / 25, 12);
    expect(chooseEscalationThreshold(points, 0.95)).toMatchObject({ reached: true, threshold: 0.81, acceptedAccuracy: 1 });
    const none = chooseEscalationThreshold(
      points.slice(0, MIN_ACCEPTED - 1).map((p) => ({ ...p, correct: true })),
      0.9,
    );
    expect(none).toMatchObject({ reached: false, threshold: 1, coverage: 0 });
  });
});

describe('metrics', () => {
  it('computes per-mode, micro and macro scores and exact matches', () => {
    const m = multiLabelMetrics(
      [['a'], ['a', 'b'], [], ['b']],
      [['a'], ['a'], [], ['a']],
      ['a', 'b'],
    );
    expect(m.perMode[0]).toMatchObject({ mode: 'a', tp: 2, fp: 0, fn: 1, precision: 1, support: 3 });
    expect(m.perMode[0]!.recall).toBeCloseTo(2 / 3, 12);
    expect(m.perMode[1]).toMatchObject({ mode: 'b', tp: 0, fp: 2, fn: 0, precision: 0, recall: 0, f1: 0 });
    expect(m.micro.precision).toBeCloseTo(0.5, 12);
    expect(m.micro.recall).toBeCloseTo(2 / 3, 12);
    expect(m.macro.f1).toBeCloseTo(0.4, 12);
    expect(m.exactMatch).toBe(0.5);
  });

  it('bins confidence and computes ECE and Brier', () => {
    const c = calibration(
      [
        { confidence: 0.95, correct: true },
        { confidence: 0.95, correct: false },
        { confidence: 0.15, correct: false },
        { confidence: 1, correct: true },
      ],
      10,
    );
    expect(c.bins[9]).toMatchObject({ count: 3 });
    expect(c.bins[9]!.accuracy).toBeCloseTo(2 / 3, 12);
    expect(c.bins[1]).toMatchObject({ count: 1, accuracy: 0 });
    expect(c.ece).toBeCloseTo((3 / 4) * Math.abs(2 / 3 - (0.95 + 0.95 + 1) / 3) + (1 / 4) * 0.15, 12);
    expect(c.brier).toBeCloseTo((0.05 ** 2 + 0.95 ** 2 + 0.15 ** 2 + 0) / 4, 12);
  });
});

describe('text features', () => {
  it('tokenises case-, URL- and apostrophe-insensitively across scripts', () => {
    expect(tokenize("It DIDN’T run https://x.dev/a?b=1 the tests — ich habe gesagt")).toEqual([
      'it', "didn't", 'run', 'urltoken', 'the', 'tests', 'ich', 'habe', 'gesagt',
    ]);
  });

  it('gives unit-length vectors, ignores unseen features, and restores bit-identically', () => {
    const v = fitTfidf(['it reformatted every file', 'it reformatted the readme', 'tests fail again', 'tests pass'], { minDf: 2 });
    const x = v.transform('It reformatted my files and the tests');
    const norm = Math.hypot(...x.val);
    expect(norm).toBeCloseTo(1, 5);
    expect(v.transform('zzzz qqqq').idx.length).toBe(0);
    const restored = restoreTfidf(v.state());
    expect(restored.transform('reformatted tests')).toEqual(v.transform('reformatted tests'));
    expect(() => restoreTfidf({ ...v.state(), wordVocab: [] })).toThrow(RangeError);
  });

  it('round-trips float32 arrays through base64 and rejects truncated data', () => {
    const a = Float32Array.from([0, -1.5, 3.1415927, 1e-30, Number.MAX_VALUE]);
    expect(decodeFloat32(encodeFloat32(a))).toEqual(a);
    expect(() => decodeFloat32('AAAA')).toThrow(/float32/);
  });

  it('reads a comment, or a report title and body, and nothing from a bare rating', () => {
    expect(signalText({ comment: 'too verbose' })).toBe('too verbose');
    expect(signalText({ title: 'Figma MCP', body: 'bad HTML' })).toBe('Figma MCP\n\nbad HTML');
    expect(signalText({ comment: '   ' })).toBeUndefined();
    expect(signalText({})).toBeUndefined();
  });
});
