import { describe, expect, it } from 'vitest';
import { batchWeightFactors } from '../../lib/compute/batch-weight-factors.ts';
import { StrideScheduler } from '../../lib/compute/stride-scheduler.ts';
import { STAGES } from '../../lib/config/stages.ts';
import { COMPUTE_CATEGORIES, COMPUTE_POOLS, type ComputeCategory } from '../../lib/ports/jobs.ts';

const equal = { inference: 1, training: 1, 'data-and-reward': 1, evaluation: 1, research: 1 };

describe('StrideScheduler', () => {
  it('gives waiting categories slots in proportion to their shares', () => {
    const shares = { inference: 1, training: 4, 'data-and-reward': 2, evaluation: 3, research: 1 };
    const s = new StrideScheduler(shares);
    const all = new Set<ComputeCategory>(COMPUTE_CATEGORIES);
    const counts = Object.fromEntries(COMPUTE_CATEGORIES.map((c) => [c, 0])) as Record<ComputeCategory, number>;
    for (let i = 0; i < 1100; i++) counts[s.next(all)!]++;
    // 1100 slots over a total share of 11: 100 per unit of share, within one slot.
    for (const c of COMPUTE_CATEGORIES) expect(Math.abs(counts[c] - shares[c] * 100)).toBeLessThanOrEqual(1);
  });

  it('skips categories with nothing waiting and gives their share to the others', () => {
    const s = new StrideScheduler({ ...equal, evaluation: 3 });
    const picks = Array.from({ length: 8 }, () => s.next(new Set<ComputeCategory>(['evaluation', 'research'])));
    expect(picks.filter((p) => p === 'evaluation')).toHaveLength(6);
    expect(s.next(new Set())).toBeUndefined();
  });

  it('does not let a category that was idle take a run of slots with banked credit', () => {
    const s = new StrideScheduler(equal);
    for (let i = 0; i < 50; i++) expect(s.next(new Set<ComputeCategory>(['training']))).toBe('training');
    // Research joins after 50 training slots: they alternate from here, research does not get 50 in a row.
    const picks = Array.from({ length: 6 }, () => s.next(new Set<ComputeCategory>(['training', 'research'])));
    expect(picks.filter((p) => p === 'research')).toHaveLength(3);
  });

  it('refuses a share that is not positive', () => {
    expect(() => new StrideScheduler({ ...equal, research: 0 })).toThrow(RangeError);
  });
});

describe('batchWeightFactors (shares of capacity → Batch weight factors, lower = more)', () => {
  it('maps the largest share to 1 and the others to largest / share', () => {
    expect(batchWeightFactors({ inference: 1, training: 3, 'data-and-reward': 2, evaluation: 3, research: 1 })).toEqual({ inference: 3, training: 1, 'data-and-reward': 1.5, evaluation: 1, research: 3 });
    expect(batchWeightFactors({ ...equal, training: 3 })['research']).toBe(3);
    expect(batchWeightFactors({ ...equal, training: 3, research: 2 })['research']).toBe(1.5);
    expect(batchWeightFactors({ ...equal, inference: 3, training: 7 })['inference']).toBe(2.3333);
  });

  it('keeps capacity ratios: capacity ∝ 1 / weightFactor ∝ share', () => {
    for (const stage of Object.values(STAGES)) {
      const factors = batchWeightFactors(stage.computeShares);
      for (const c of COMPUTE_CATEGORIES) expect((1 / factors[c]) * Math.max(...Object.values(stage.computeShares))).toBeCloseTo(stage.computeShares[c], 3);
    }
  });

  it('refuses shares Batch cannot express', () => {
    expect(() => batchWeightFactors({ ...equal, research: 0 })).toThrow(/positive/);
    expect(() => batchWeightFactors({ ...equal, training: 10_000 })).toThrow(/999.9999/);
  });
});

describe('stage compute settings', () => {
  it('has shares for all five categories, both pools and a RUNNABLE limit Batch accepts in every stage', () => {
    for (const stage of Object.values(STAGES)) {
      expect(Object.keys(stage.computeShares).sort()).toEqual([...COMPUTE_CATEGORIES].sort());
      for (const pool of COMPUTE_POOLS) {
        expect(stage.computePools[pool].instanceTypes.length).toBeGreaterThan(0);
        expect(stage.computePools[pool].maxvCpus).toBeGreaterThan(0);
        expect(stage.computePools[pool].localMaxConcurrency).toBeGreaterThan(0);
      }
      expect(stage.runnableTimeLimitSeconds).toBeGreaterThanOrEqual(600);
      expect(stage.runnableTimeLimitSeconds).toBeLessThanOrEqual(86_400);
    }
  });
});
