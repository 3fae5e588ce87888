/**
 * Scores and 95% confidence intervals of a sweep cell, from per-task tallies.
 *
 * The score is the mean over tasks of each task's pass rate (pass@1, unbiased for any number of attempts). Attempts
 * of one task are not independent, so the interval treats the task as the unit (a cluster): with one attempt per
 * task it is the Wilson score interval of passes / tasks; with several, the normal interval of the mean of per-task
 * rates (sample standard deviation / √tasks). When every task has the same rate (all pass, all fail) that standard
 * error is 0 and says nothing, so the Wilson interval of the pooled attempts is used instead.
 */
import type { TaskTally } from './record-codecs.ts';

export const Z95 = 1.959963984540054;

export interface Interval {
  low: number;
  high: number;
}

/** Wilson score interval for `passes` out of `n` (n ≥ 1). */
export function wilsonInterval(passes: number, n: number, z = Z95): Interval {
  const p = passes / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

export interface CellScore {
  score: number | null;
  /** Tasks with at least one scored attempt. */
  n: number;
  attempts: number;
  passes: number;
  ci: Interval | null;
  /** Standard error of the score (for unpaired comparisons); null when n < 1. */
  se: number | null;
}

/**
 * @example
 * scoreTallies([{ taskId: 'a', scored: 1, passed: 1 }, { taskId: 'b', scored: 1, passed: 0 }]); // score 0.5, Wilson CI
 */
export function scoreTallies(tallies: readonly TaskTally[]): CellScore {
  const scored = tallies.filter((t) => t.scored > 0);
  const attempts = scored.reduce((a, t) => a + t.scored, 0);
  const passes = scored.reduce((a, t) => a + t.passed, 0);
  const n = scored.length;
  if (n === 0) return { score: null, n: 0, attempts: 0, passes: 0, ci: null, se: null };
  const rates = scored.map((t) => t.passed / t.scored);
  const score = rates.reduce((a, b) => a + b, 0) / n;
  if (scored.every((t) => t.scored === 1)) {
    const ci = wilsonInterval(passes, n);
    return { score, n, attempts, passes, ci, se: (ci.high - ci.low) / (2 * Z95) };
  }
  const sd = n > 1 ? Math.sqrt(rates.reduce((a, r) => a + (r - score) ** 2, 0) / (n - 1)) : 0;
  const se = sd / Math.sqrt(n);
  if (se === 0) {
    const ci = wilsonInterval(passes, attempts);
    return { score, n, attempts, passes, ci, se: (ci.high - ci.low) / (2 * Z95) };
  }
  return { score, n, attempts, passes, ci: { low: Math.max(0, score - Z95 * se), high: Math.min(1, score + Z95 * se) }, se };
}

export interface Difference {
  /** candidate − incumbent. */
  difference: number;
  ci: Interval;
  /** Paired over common tasks (per-task rate differences) or unpaired (independent standard errors). */
  paired: boolean;
  /** Tasks the difference is computed over (common tasks when paired). */
  n: number;
}

/**
 * The difference of two cells with a 95% CI: paired over the tasks both scored when there are at least two (the
 * usual case: the same suite version), otherwise from the two standard errors.
 */
export function differenceOf(candidate: readonly TaskTally[], incumbent: readonly TaskTally[]): Difference | null {
  const inc = new Map(incumbent.filter((t) => t.scored > 0).map((t) => [t.taskId, t.passed / t.scored]));
  const pairs = candidate.filter((t) => t.scored > 0 && inc.has(t.taskId)).map((t) => t.passed / t.scored - inc.get(t.taskId)!);
  if (pairs.length >= 2) {
    const m = pairs.length;
    const mean = pairs.reduce((a, b) => a + b, 0) / m;
    const sd = Math.sqrt(pairs.reduce((a, d) => a + (d - mean) ** 2, 0) / (m - 1));
    const se = sd / Math.sqrt(m);
    return { difference: mean, ci: { low: mean - Z95 * se, high: mean + Z95 * se }, paired: true, n: m };
  }
  const a = scoreTallies(candidate);
  const b = scoreTallies(incumbent);
  if (a.score === null || b.score === null || a.se === null || b.se === null) return null;
  const d = a.score - b.score;
  const se = Math.sqrt(a.se ** 2 + b.se ** 2);
  return { difference: d, ci: { low: d - Z95 * se, high: d + Z95 * se }, paired: false, n: Math.min(a.n, b.n) };
}
