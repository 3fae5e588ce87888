/**
 * Scores and 95% confidence intervals of a sweep cell, from per-task tallies.
 *
 * The score is the mean over tasks of each task's pass rate (pass@1, unbiased for any number of attempts). Attempts
 * of one task are not independent, so the interval treats the task as the unit (a cluster): with one attempt per
 * task it is the Wilson score interval of passes / tasks; with several, the t interval of the mean of per-task rates
 * (sample standard deviation / √tasks, tasks − 1 degrees of freedom). When every task has the same rate (all pass,
 * all fail) that standard error is 0 and says nothing, so the Wilson interval of the pooled attempts is used instead. The distributions and
 * the Wilson interval are the shared statistics module's (`lib/shared/statistics/`), re-exported for callers here.
 */
import { Z95, studentTQuantile, wilsonInterval, type Interval } from '../shared/statistics/index.ts';
import type { TaskTally } from './record-codecs.ts';

export { Z95, wilsonInterval, type Interval };

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
  // A mean of few per-task rates: Student's t, not the normal, or the interval is too narrow on a small suite.
  const t = studentTQuantile(0.975, n - 1);
  return { score, n, attempts, passes, ci: { low: Math.max(0, score - t * se), high: Math.min(1, score + t * se) }, se };
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

/** A difference of two pass rates lies in [−1, 1]; so does its interval. */
function clampDifference(ci: Interval): Interval {
  return { low: Math.max(-1, ci.low), high: Math.min(1, ci.high) };
}

/**
 * The difference of two cells with a 95% CI (clamped to [−1, 1]: a difference of rates): paired over the tasks both
 * scored (Student's t on the per-task differences) when there are at least two (the usual case: the same suite version), otherwise from the two standard
 * errors. `n` is what the difference rests on (common tasks, or the smaller cell): the verdict rule reads it.
 *
 * @example
 * differenceOf(candidateTallies, incumbentTallies); // { difference: 0.12, ci: { low: 0.04, high: 0.2 }, paired: true, n: 50 }
 */
export function differenceOf(candidate: readonly TaskTally[], incumbent: readonly TaskTally[]): Difference | null {
  const inc = new Map(incumbent.filter((t) => t.scored > 0).map((t) => [t.taskId, t.passed / t.scored]));
  const pairs = candidate.filter((t) => t.scored > 0 && inc.has(t.taskId)).map((t) => t.passed / t.scored - inc.get(t.taskId)!);
  if (pairs.length >= 2) {
    const m = pairs.length;
    const mean = pairs.reduce((a, b) => a + b, 0) / m;
    const sd = Math.sqrt(pairs.reduce((a, d) => a + (d - mean) ** 2, 0) / (m - 1));
    const se = sd / Math.sqrt(m);
    const t = studentTQuantile(0.975, m - 1);
    return { difference: mean, ci: clampDifference({ low: mean - t * se, high: mean + t * se }), paired: true, n: m };
  }
  const a = scoreTallies(candidate);
  const b = scoreTallies(incumbent);
  if (a.score === null || b.score === null || a.se === null || b.se === null) return null;
  const d = a.score - b.score;
  const se = Math.sqrt(a.se ** 2 + b.se ** 2);
  return { difference: d, ci: clampDifference({ low: d - Z95 * se, high: d + Z95 * se }), paired: false, n: Math.min(a.n, b.n) };
}
