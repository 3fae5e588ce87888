/**
 * The calibration report and the acceptance rule on scripted judges with known error rates: a judge that flips each
 * gold label with probability p. p = 0.05 is promoted, p = 0.4 is refused, and a candidate worse than the incumbent
 * is refused; the report's other parts (human ceiling, test–retest, position swap, length bias, cost, latency) are
 * checked against values computed by hand.
 */
import { describe, expect, it } from 'vitest';
import { ErrorNames } from '../../lib/errors.ts';
import { decideAcceptance } from '../../lib/judges/calibration/acceptance-rule.ts';
import { cohenKappa } from '../../lib/judges/calibration/agreement.ts';
import { seededRandom } from '../../lib/judges/calibration/bootstrap.ts';
import { buildCalibrationReport } from '../../lib/judges/calibration/build-calibration-report.ts';
import { AcceptanceRuleSchema, CalibrationReportSchema, type GoldItem, type JudgeLabels } from '../../lib/judges/schemas.ts';

const CRITERIA = ['correctness', 'follows-instructions'];
const RULE = AcceptanceRuleSchema.parse({ minKappaLower: 0.6, maxKappaDrop: 0.05, minItems: 30 });

function goldSet(n: number, seed: number): GoldItem[] {
  const next = seededRandom(seed);
  return Array.from({ length: n }, (_, i) => ({
    id: `item-${i}`,
    subject: { kind: 'attempt' as const, runId: 'run-1', attemptId: `attempt-${i}` },
    labels: Object.fromEntries(CRITERIA.map((c) => [c, next() / 4294967296 < 0.55 ? 'pass' : 'fail'])),
    annotators: ['ana@example.com'],
    length: 100 + (next() % 3000),
  }));
}

/** A scripted judge: each gold label flipped with probability p; cost and latency fixed per verdict. */
function scriptedJudge(items: readonly GoldItem[], p: number, seed: number, costUsd: number, latencyMs = 200): Map<string, JudgeLabels> {
  const next = seededRandom(seed);
  return new Map(
    items.map((item, i) => [
      item.id,
      {
        labels: Object.fromEntries(Object.entries(item.labels).map(([id, g]) => [id, next() / 4294967296 < p ? (g === 'pass' ? 'fail' : 'pass') : g])),
        costUsd,
        latencyMs: latencyMs + (i % 10),
      },
    ]),
  );
}

function report(items: GoldItem[], verdicts: Map<string, JudgeLabels>, name: string) {
  return buildCalibrationReport({
    id: `cal-${name}`,
    judge: { name, version: '0123456789ab' },
    goldSet: 'gold-main',
    createdAt: '2026-12-03T19:00:00.000Z',
    items,
    verdicts,
    resamples: 1000,
    seed: 42,
  });
}

describe('acceptance rule on scripted judges with known error rates (n = 200)', () => {
  const items = goldSet(200, 1);
  const good = report(items, scriptedJudge(items, 0.05, 2, 0.002), 'good');
  const bad = report(items, scriptedJudge(items, 0.4, 3, 0.0005), 'bad');
  const fair = report(items, scriptedJudge(items, 0.15, 4, 0.001), 'fair');

  it('reports kappa near its expected value 1 − 2p / (1 − pe) for each judge', () => {
    for (const c of good.criteria) {
      expect(c.n).toBe(200);
      expect(c.kappa.estimate).toBeGreaterThan(0.8);
      expect(c.kappa.low).toBeLessThan(c.kappa.estimate);
      expect(c.kappa.high).toBeGreaterThan(c.kappa.estimate);
    }
    for (const c of bad.criteria) expect(c.kappa.estimate).toBeLessThan(0.35);
    expect(CalibrationReportSchema.parse(good)).toEqual(good);
  });

  it('promotes the good judge and refuses the bad one, naming the criterion and the numbers', () => {
    expect(decideAcceptance(good, undefined, RULE)).toEqual({ accepted: true, reasons: [] });
    const refused = decideAcceptance(bad, undefined, RULE);
    expect(refused.accepted).toBe(false);
    expect(refused.reasons).toHaveLength(2);
    for (const [i, id] of CRITERIA.entries()) {
      const c = bad.criteria.find((x) => x.id === id)!;
      expect(refused.reasons[i]).toBe(
        `${id}: kappa lower bound ${c.kappa.low.toFixed(3)} < minKappaLower 0.600 (estimate ${c.kappa.estimate.toFixed(3)}, n 200)`,
      );
    }
  });

  it('refuses a candidate worse than the incumbent even when it clears the threshold', () => {
    expect(decideAcceptance(fair, undefined, { ...RULE, minKappaLower: 0.5 }).accepted).toBe(true);
    const decision = decideAcceptance(fair, good, { ...RULE, minKappaLower: 0.5 });
    expect(decision.accepted).toBe(false);
    expect(decision.reasons.every((r) => /below the incumbent's \d\.\d{3} − maxKappaDrop 0\.050/.test(r))).toBe(true);
    expect(decision.reasons.map((r) => r.split(':')[0])).toEqual(CRITERIA);
    // The good judge replacing the fair one is fine.
    expect(decideAcceptance(good, fair, RULE).accepted).toBe(true);
  });

  it('with requireCheaper, refuses a candidate that does not cost less, and uses the costs given', () => {
    const rule = { ...RULE, requireCheaper: true };
    expect(decideAcceptance(good, fair, rule)).toEqual({
      accepted: false,
      reasons: ['cost: candidate $0.00200 per verdict is not below the incumbent\'s $0.00100'],
    });
    expect(decideAcceptance(good, fair, rule, { candidate: 0.0004 }).accepted).toBe(true);
    expect(decideAcceptance(good, undefined, rule).accepted).toBe(true);
    const { costPerVerdictUsd: _drop, ...unknownCost } = fair;
    expect(decideAcceptance(good, unknownCost, rule).reasons[0]).toMatch(/cost per verdict is unknown \(candidate \$0\.00200, incumbent unknown\)/);
  });

  it('refuses a criterion with fewer than minItems gold items', () => {
    const few = goldSet(20, 7);
    const small = report(few, scriptedJudge(few, 0, 8, 0.001), 'small');
    const decision = decideAcceptance(small, undefined, { ...RULE, minKappaLower: -1 });
    expect(decision.reasons).toEqual(['correctness: n 20 < minItems 30', 'follows-instructions: n 20 < minItems 30']);
  });

  it('refuses an invalid rule with a ValidationError naming the field', () => {
    expect(() => decideAcceptance(good, undefined, { ...RULE, minKappaLower: 3 })).toThrow(
      expect.objectContaining({ name: ErrorNames.validation, issues: [expect.objectContaining({ path: 'rule.minKappaLower' })] }),
    );
  });
});

describe('calibration report', () => {
  it('pairs by label id, skips missing verdicts, and computes the confusion matrix and per-class metrics', () => {
    const items = goldSet(60, 11);
    const verdicts = scriptedJudge(items, 0.1, 12, 0.001);
    verdicts.delete('item-0');
    const r = report(items, verdicts, 'partial');
    const c = r.criteria.find((x) => x.id === 'correctness')!;
    expect(c.n).toBe(59);
    const gold = items.slice(1).map((i) => i.labels.correctness!);
    const judge = items.slice(1).map((i) => verdicts.get(i.id)!.labels.correctness!);
    expect(c.kappa.estimate).toBeCloseTo(cohenKappa(gold, judge)!, 12);
    expect(c.confusion.labels).toEqual(['pass', 'fail']);
    const tp = gold.filter((g, i) => g === 'pass' && judge[i] === 'pass').length;
    expect(c.confusion.matrix[0]![0]).toBe(tp);
    expect(c.perClass.pass!.recall).toBeCloseTo(tp / gold.filter((g) => g === 'pass').length, 12);
    expect(c.perClass.pass!.precision).toBeCloseTo(tp / judge.filter((g) => g === 'pass').length, 12);
    expect(c.accuracy).toBeCloseTo(gold.filter((g, i) => g === judge[i]).length / 59, 12);
  });

  it('is reproducible by seed', () => {
    const items = goldSet(80, 21);
    const verdicts = scriptedJudge(items, 0.2, 22, 0.001);
    expect(report(items, verdicts, 'x')).toEqual(report(items, verdicts, 'x'));
    const other = buildCalibrationReport({ id: 'c', judge: { name: 'x', version: 'v' }, goldSet: 'g', createdAt: 'now', items, verdicts, seed: 43 });
    expect(other.criteria[0]!.kappa.estimate).toBe(report(items, verdicts, 'x').criteria[0]!.kappa.estimate);
    expect(other.criteria[0]!.kappa.low).not.toBe(report(items, verdicts, 'x').criteria[0]!.kappa.low);
  });

  it('gives the human ceiling on the double-labelled slice, test–retest, cost and latency', () => {
    const items = goldSet(100, 31).map((item, i) =>
      i < 40 ? { ...item, secondLabels: { correctness: i % 10 === 0 ? (item.labels.correctness === 'pass' ? 'fail' : 'pass') : item.labels.correctness! } } : item,
    );
    const verdicts = scriptedJudge(items, 0.1, 32, 0.003, 100);
    const retest = scriptedJudge(items, 0.1, 33, 0.003);
    const r = buildCalibrationReport({ id: 'c', judge: { name: 'x', version: 'v' }, goldSet: 'g', createdAt: 'now', items, verdicts, retest });
    const ceiling = r.criteria.find((c) => c.id === 'correctness')!.humanCeiling!;
    const first = items.slice(0, 40).map((i) => i.labels.correctness!);
    const second = items.slice(0, 40).map((i) => i.secondLabels!.correctness!);
    expect(ceiling.estimate).toBeCloseTo(cohenKappa(first, second)!, 12);
    expect(ceiling.low).toBeLessThanOrEqual(ceiling.estimate);
    expect(r.criteria.find((c) => c.id === 'follows-instructions')!.humanCeiling).toBeUndefined();

    let same = 0;
    const perLabel: Record<string, unknown> = {};
    const kappas: number[] = [];
    for (const id of CRITERIA) {
      const a = items.map((item) => verdicts.get(item.id)!.labels[id]!);
      const b = items.map((item) => retest.get(item.id)!.labels[id]!);
      const agreeing = a.filter((x, i) => x === b[i]).length;
      same += agreeing;
      kappas.push(cohenKappa(a, b)!);
      perLabel[id] = { n: 100, agreement: agreeing / 100, kappa: expect.closeTo(cohenKappa(a, b)!, 12) };
    }
    // Kappa per label id, then averaged (pooling the ids would mix their base rates).
    expect(r.testRetest).toEqual({ n: 200, agreement: same / 200, kappa: expect.closeTo((kappas[0]! + kappas[1]!) / 2, 12), perLabel });
    expect(r.costPerVerdictUsd).toBeCloseTo(0.003, 12);
    // Latencies 100..109, ten of each: numpy's percentile gives 104.5 and 109.
    expect(r.latencyMs).toEqual({ p50: 104.5, p95: 109 });
    expect(CalibrationReportSchema.safeParse(r).success).toBe(true);
  });

  it('measures position-swap consistency for pairs: a↔b flips, tie stays', () => {
    const pairItem = (i: number, gold: string): GoldItem => ({
      id: `pair-${i}`,
      subject: { kind: 'pair', a: { kind: 'attempt', runId: 'r', attemptId: `a${i}` }, b: { kind: 'attempt', runId: 'r', attemptId: `b${i}` } },
      labels: { preference: gold },
      annotators: ['ana@example.com'],
      length: i * 10 - 20,
    });
    const items = [pairItem(0, 'a'), pairItem(1, 'b'), pairItem(2, 'tie'), pairItem(3, 'a'), pairItem(4, 'b')];
    const v = (l: string): JudgeLabels => ({ labels: { preference: l }, latencyMs: 10 });
    const verdicts = new Map([['pair-0', v('a')], ['pair-1', v('b')], ['pair-2', v('tie')], ['pair-3', v('a')], ['pair-4', v('a')]]);
    // Consistent: 0 (a→b), 1 (b→a), 2 (tie→tie); inconsistent: 3 (a→a, position bias), 4 (a→tie).
    const swapped = new Map([['pair-0', v('b')], ['pair-1', v('a')], ['pair-2', v('tie')], ['pair-3', v('a')], ['pair-4', v('tie')]]);
    const r = buildCalibrationReport({ id: 'c', judge: { name: 'p', version: 'v' }, goldSet: 'g', createdAt: 'now', items, verdicts, swapped });
    expect(r.positionSwap).toEqual({ n: 5, consistency: 0.6 });
    expect(r.criteria[0]!.confusion.labels).toEqual(['a', 'b', 'tie']);
    expect(r.costPerVerdictUsd).toBeUndefined();
    expect(r.lengthBias).toBeDefined();
  });

  it('says why kappa is undefined when every label is one class, and the rule refuses it', () => {
    const items = goldSet(40, 41).map((i) => ({ ...i, labels: { correctness: 'pass' } }));
    const verdicts = new Map(items.map((i) => [i.id, { labels: { correctness: 'pass' }, latencyMs: 5 }]));
    const r = buildCalibrationReport({ id: 'c', judge: { name: 'x', version: 'v' }, goldSet: 'g', createdAt: 'now', items, verdicts });
    const c = r.criteria[0]!;
    expect(c.kappaUndefined).toBe('every item is pass for both gold and judge: chance agreement is 1');
    expect(c.kappa).toEqual({ estimate: 0, low: 0, high: 0 });
    expect(c.accuracy).toBe(1);
    expect(decideAcceptance(r, undefined, { ...RULE, minKappaLower: -1 }).reasons).toEqual([
      'correctness: kappa undefined (every item is pass for both gold and judge: chance agreement is 1), n 40',
    ]);
  });

  it('refuses bad input with a ValidationError naming the field', () => {
    const items = goldSet(3, 51);
    const verdicts = scriptedJudge(items, 0, 52, 0.001);
    const base = { id: 'c', judge: { name: 'x', version: 'v' }, goldSet: 'g', createdAt: 'now', items, verdicts };
    expect(() => buildCalibrationReport({ ...base, resamples: 0 })).toThrow(
      expect.objectContaining({ name: ErrorNames.validation, issues: [{ path: 'resamples', message: 'must be a positive integer' }] }),
    );
    expect(() => buildCalibrationReport({ ...base, items: [...items, items[0]!] })).toThrow(/items\[3\]\.id: duplicate gold item id item-0/);
    verdicts.set('item-1', { labels: {}, latencyMs: -1 });
    expect(() => buildCalibrationReport(base)).toThrow(/verdicts\.item-1\.latencyMs/);
  });
});

describe('acceptance needs evidence: coverage, class support, a defined bootstrap', () => {
  /** `n` gold items on one criterion: `fails` of them `fail`, the rest `pass`. */
  function oneCriterion(n: number, fails: number): GoldItem[] {
    return Array.from({ length: n }, (_, i) => ({
      id: `g-${i}`,
      subject: { kind: 'attempt' as const, runId: 'r', attemptId: `a-${i}` },
      labels: { scope: i < fails ? 'fail' : 'pass' },
      annotators: ['ana'],
    }));
  }
  /** A judge that agrees with people on every item it answers, and answers only `answered` of them. */
  function perfectOn(items: readonly GoldItem[], answered: (i: number) => boolean): Map<string, JudgeLabels> {
    return new Map(items.flatMap((item, i) => (answered(i) ? [[item.id, { labels: { ...item.labels }, latencyMs: 1 }] as const] : [[item.id, { labels: {}, latencyMs: 1 }] as const])));
  }
  const build = (items: GoldItem[], verdicts: Map<string, JudgeLabels>) =>
    buildCalibrationReport({ id: 'c', judge: { name: 'j', version: 'v' }, goldSet: 'g', createdAt: 'now', items, verdicts, resamples: 1000, seed: 9 });
  const rule = AcceptanceRuleSchema.parse({ minKappaLower: 0.6, minItems: 30 });

  it('records coverage and refuses a judge that answered 30 of 300 gold items, however well', () => {
    const items = oneCriterion(300, 120);
    // It answers only the items it is sure of: 15 fails and 15 passes, all right.
    const answered = (i: number) => (i < 120 ? i < 15 : i < 135);
    const r = build(items, perfectOn(items, answered));
    expect(r.coverage).toEqual({ goldItems: 300, answered: 30, share: 0.1 });
    expect(r.criteria[0]).toMatchObject({ id: 'scope', n: 30, goldItems: 300, coverage: 0.1, kappa: { estimate: 1, low: 1, high: 1 } });
    const decision = decideAcceptance(r, undefined, rule);
    expect(decision.accepted).toBe(false);
    expect(decision.reasons).toContain('coverage: the judge answered 30 of 300 gold items (0.100 < minCoverage 0.950)');
    expect(decision.reasons.some((x) => x.startsWith('scope: coverage 0.100 < minCoverage 0.950'))).toBe(true);
    // 290 of 300 answered (0.967): accepted.
    const most = build(items, perfectOn(items, (i) => i % 30 !== 7));
    expect(most.coverage!.share).toBeCloseTo(290 / 300, 12);
    expect(decideAcceptance(most, undefined, rule)).toEqual({ accepted: true, reasons: [] });
  });

  it('refuses a gold class with fewer than minClassSupport items, naming it', () => {
    const items = oneCriterion(80, 4);
    const r = build(items, perfectOn(items, () => true));
    expect(r.criteria[0]!.bootstrapDefined).toBeGreaterThan(0.95);
    const decision = decideAcceptance(r, undefined, rule);
    expect(decision).toEqual({ accepted: false, reasons: ['scope: class fail has 4 gold items < minClassSupport 5'] });
    expect(decideAcceptance(r, undefined, { ...rule, minClassSupport: 4 }).accepted).toBe(true);
  });

  it('refuses when kappa is undefined on more than 5% of the bootstrap resamples (29 pass + 1 fail)', () => {
    const items = oneCriterion(30, 1);
    const r = build(items, perfectOn(items, () => true));
    // A resample misses the one fail with probability (29/30)^30 ≈ 0.36: kappa undefined there.
    expect(r.criteria[0]!.bootstrapDefined).toBeGreaterThan(0.55);
    expect(r.criteria[0]!.bootstrapDefined).toBeLessThan(0.72);
    expect(r.criteria[0]!.kappa).toEqual({ estimate: 1, low: 1, high: 1 });
    const decision = decideAcceptance(r, undefined, { ...rule, minClassSupport: 0 });
    expect(decision.accepted).toBe(false);
    expect(decision.reasons).toHaveLength(1);
    expect(decision.reasons[0]).toMatch(/^scope: kappa defined on 0\.\d{3} of the bootstrap resamples < minDefinedResamples 0\.950$/);
  });

  it('computes test–retest kappa per label id: a coin-flip retest reads near 0, not the pooled 0.4', () => {
    const next = seededRandom(5);
    const coin = (p: number) => next() / 4294967296 < p;
    const items: GoldItem[] = Array.from({ length: 400 }, (_, i) => ({
      id: `t-${i}`,
      subject: { kind: 'attempt' as const, runId: 'r', attemptId: `a-${i}` },
      labels: { c1: 'pass', c2: 'fail' },
      annotators: ['ana'],
    }));
    // Two runs, each verdict drawn at random: c1 mostly pass, c2 mostly fail, the runs independent.
    const draw = () =>
      new Map<string, JudgeLabels>(items.map((item) => [item.id, { labels: { c1: coin(0.8) ? 'pass' : 'fail', c2: coin(0.8) ? 'fail' : 'pass' }, latencyMs: 1 }]));
    const verdicts = draw();
    const retest = draw();
    const r = buildCalibrationReport({ id: 'c', judge: { name: 'j', version: 'v' }, goldSet: 'g', createdAt: 'now', items, verdicts, retest, resamples: 10 });
    const pooled = cohenKappa(
      items.flatMap((i) => ['c1', 'c2'].map((id) => `${id}/${verdicts.get(i.id)!.labels[id]}`)),
      items.flatMap((i) => ['c1', 'c2'].map((id) => `${id}/${retest.get(i.id)!.labels[id]}`)),
    )!;
    expect(pooled).toBeGreaterThan(0.3);
    expect(Math.abs(r.testRetest!.kappa!)).toBeLessThan(0.12);
    for (const id of ['c1', 'c2']) {
      const k = cohenKappa(items.map((i) => verdicts.get(i.id)!.labels[id]!), items.map((i) => retest.get(i.id)!.labels[id]!))!;
      expect(r.testRetest!.perLabel![id]).toEqual({ n: 400, agreement: expect.any(Number), kappa: expect.closeTo(k, 12) });
    }
    expect(r.testRetest!.n).toBe(800);
  });
});
