import { describe, expect, it } from 'vitest';
import type { AttemptRecord, AttemptStatus } from '../../../lib/harness/attempt/attempt-record.ts';
import { passAtK } from '../../../lib/harness/eval/pass-at-k.ts';
import { summarizeAttempts } from '../../../lib/harness/eval/run-eval.ts';

/** C(n, k) by the textbook formula, to check the product form against. */
function choose(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return r;
}

describe('passAtK (unbiased estimator, 1 - C(n-c,k)/C(n,k))', () => {
  it('matches known values', () => {
    expect(passAtK(5, 0, 1)).toBe(0);
    expect(passAtK(5, 5, 1)).toBe(1);
    expect(passAtK(5, 2, 1)).toBeCloseTo(0.4, 12);
    expect(passAtK(5, 2, 2)).toBeCloseTo(0.7, 12); // 1 - 3/10
    expect(passAtK(10, 3, 5)).toBeCloseTo(1 - 21 / 252, 12);
    expect(passAtK(4, 3, 2)).toBe(1); // n - c < k: every k-subset holds a pass
    expect(passAtK(200, 1, 100)).toBeCloseTo(0.5, 12);
  });

  it('agrees with the binomial formula over a grid, and pass@1 is c/n', () => {
    for (let n = 1; n <= 12; n++)
      for (let c = 0; c <= n; c++)
        for (let k = 1; k <= n; k++) expect(passAtK(n, c, k)).toBeCloseTo(1 - choose(n - c, k) / choose(n, k), 10);
    for (let n = 1; n <= 12; n++) for (let c = 0; c <= n; c++) expect(passAtK(n, c, 1)).toBeCloseTo(c / n, 12);
  });

  it('refuses k > n and inconsistent counts', () => {
    expect(() => passAtK(2, 1, 3)).toThrow(RangeError);
    expect(() => passAtK(2, 3, 1)).toThrow(RangeError);
    expect(() => passAtK(2, 1, 0)).toThrow(RangeError);
  });
});

function rec(taskId: string, n: number, status: AttemptStatus, tokens = 10): AttemptRecord {
  const usage = { promptTokens: tokens, completionTokens: 1, cachedTokens: 0 };
  return {
    pk: 'EVAL#r', sk: `ATTEMPT#${taskId}#strict#${n}`, kind: 'eval-attempt', runId: 'r', attemptId: `r.${taskId}.${n}`, taskId, suite: 's', mode: 'strict', n, status,
    usage, usageAllTries: usage, turns: 1, durationMs: 100, model: 'm', tries: 1, history: [], startedAt: '', finishedAt: '',
  };
}

describe('summarizeAttempts', () => {
  it('averages per-task estimates, keeps infrastructure errors out of the score and counts them apart', () => {
    const records = [
      // a: 4 scored, 1 passed
      rec('a', 0, 'passed'), rec('a', 1, 'failed'), rec('a', 2, 'failed'), rec('a', 3, 'failed'),
      // b: 3 scored, 3 passed, 1 infrastructure error (not a failure)
      rec('b', 0, 'passed'), rec('b', 1, 'passed'), rec('b', 2, 'infrastructure-error', 500), rec('b', 3, 'passed'),
      // another mode and an attempt beyond K are not this result's
      { ...rec('a', 0, 'passed'), mode: 'lenient' as const }, rec('a', 4, 'passed'),
    ];
    const r = summarizeAttempts(records, { runId: 'r', mode: 'strict', model: 'm', attemptsPerTask: 4, concurrency: 1, taskIds: ['a', 'b'], ran: 8, skipped: 0, startedAt: new Date(0), finishedAt: new Date(5000) });
    expect(r.counts).toEqual({ passed: 4, failed: 3, ungraded: 0, 'infrastructure-error': 1 });
    expect(r.perTask.map((t) => [t.taskId, t.scored, t.passed, t.infrastructureErrors])).toEqual([['a', 4, 1, 0], ['b', 3, 3, 1]]);
    expect(r.passAt1).toBeCloseTo((passAtK(4, 1, 1) + passAtK(3, 3, 1)) / 2, 12);
    // pass@4 needs 4 scored attempts: only task a has them.
    expect(r.passAtK).toEqual({ k: 4, value: passAtK(4, 1, 4), tasks: 1 });
    expect(r.tokens).toEqual({ prompt: 8 * 10 + 500 - 10, completion: 8, cached: 0, total: 8 * 10 + 500 - 10 + 8 });
    expect(r.wallTimeMs).toBe(5000);
    expect(r.attemptTimeMs).toBe(800);
  });
});
