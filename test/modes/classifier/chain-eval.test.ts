import { beforeAll, describe, expect, it } from 'vitest';
import { evaluateChain } from '../../../bench/chain-eval.ts';
import { evaluateLocal } from '../../../bench/eval-classifier.ts';
import { JUDGE_MAX_ATTEMPTS } from '../../../lib/modes/judge-signal.ts';

let local: ReturnType<typeof evaluateLocal>;
beforeAll(() => {
  local = evaluateLocal();
});

describe('eval:classifier', () => {
  it('reports the local classifier on the held-out split only, with calibration', () => {
    const r = local.result;
    expect(r.model.heldoutItems).toBe(local.heldout.length);
    expect(local.heldout.every((x) => x.split === 'heldout')).toBe(true);
    expect(r.metrics.items).toBe(local.heldout.length);
    expect(r.metrics.perMode.map((m) => m.mode)).toEqual([...local.model.modes]);
    expect(r.escalation.escalated + r.escalation.kept).toBe(local.heldout.length);
    expect(r.confidenceCalibration.bins.reduce((a, b) => a + b.count, 0)).toBe(local.heldout.length);
    expect(r.probabilityCalibration.items).toBe(local.heldout.length * local.model.modes.length);
    expect(r.escalationTradeoff.map((t) => t.targetAccuracy)).toEqual([0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9]);
  });

  it('chain with a perfect simulated judge: every escalated item is judged and right, so the chain beats local', async () => {
    const c = await evaluateChain(local, { judgeAccuracy: 1, malformedShare: 0, brokenShare: 0 });
    const escalated = local.result.escalation.escalated;
    expect(c.judge.simulated).toBe(true);
    expect(c.outcomes.judge).toBe(escalated);
    expect(c.outcomes.local).toBe(local.result.escalation.kept);
    expect(c.outcomes.review).toBeUndefined();
    expect(c.judgeExactMatch).toBe(1);
    expect(c.judgeCalls).toBe(escalated);
    const keptRight = local.result.escalation.keptExactMatch * local.result.escalation.kept;
    expect(c.metrics.exactMatch * local.heldout.length).toBeCloseTo(keptRight + escalated, 6);
    expect(c.metrics.micro.f1).toBeGreaterThan(local.result.metrics.micro.f1);
  });

  it('chain with a judge that never answers properly: retried, then sent to review with the local labels', async () => {
    const c = await evaluateChain(local, { judgeAccuracy: 1, brokenShare: 1 });
    const escalated = local.result.escalation.escalated;
    expect(c.outcomes.judge).toBeUndefined();
    expect(c.outcomes.review).toBe(escalated);
    expect(c.judgeCalls).toBe(escalated * JUDGE_MAX_ATTEMPTS);
    expect(c.metrics.micro.f1).toBeCloseTo(local.result.metrics.micro.f1, 12);
  });
});
