/**
 * The verdict from reports, by rules an attempt cannot talk its way around:
 * - every `failToPass` id is reported `passed`;
 * - every `passToPass` id is reported `passed`;
 * - an id no report names is `missing`, which is not passed;
 * - the tests collected are not fewer than expected (the task's ids, or a baseline count the task gives);
 * - some report was produced at all.
 * The exit code plays no part (grade-attempt adds timeouts as a reason of their own).
 */
import { TestOutcomeIndex } from './test-id.ts';
import type { GradedOutcome, TestOutcome, TestReport } from './test-report.ts';

/** Reason codes; a reason string is `code` or `code: detail`. */
export const REASON_CODES = [
  'patch-does-not-apply',
  'no-test-report',
  'fail-to-pass-not-passed',
  'pass-to-pass-not-passed',
  'collected-tests-dropped',
  'test-command-timed-out',
  'no-tests-to-grade',
  /** pytest ran through the stream but a session never ended (crash, `os._exit`, killed). */
  'test-stream-incomplete',
  /** The verdict channel caught tampering (see `pytest-stream.ts`): an integrity failure. */
  'verdict-integrity',
  /** A flag of `VERDICT_TAMPERING_KINDS` in strict mode: an integrity failure. */
  'integrity-flag',
  /** A rubric judge's weighted score is under the task's `grading.minScore` (`0.5 < 1 (criteria c2 failed)`). */
  'judge-score-below-threshold',
  /** The judge gave no checked verdict on some criteria (a quote not in the attempt, no valid answer, budget spent): each counts 0. */
  'judge-incomplete',
  /** The task is graded by a judge and no judge model is configured: never a pass (`runEval` leaves it ungraded). */
  'judge-not-configured',
  /** The task's `grading.judge` names a judge (or version) the registry does not have, or one with no promoted version: ungraded. */
  'judge-not-registered',
  /** The task's `grading.judge` names a judge that is not a rubric judge (pairwise, failure-mode, reward model): ungraded. */
  'judge-not-rubric',
] as const;

/** Reason codes that make a failure an integrity failure (tampering with the verdict), not the model's wrong fix. */
export const INTEGRITY_REASON_CODES: readonly string[] = ['verdict-integrity', 'integrity-flag'];
export type ReasonCode = (typeof REASON_CODES)[number];

/** The code of a reason string (`'fail-to-pass-not-passed: tests/t.py::a (failed)'` → `'fail-to-pass-not-passed'`). */
export function reasonCode(reason: string): string {
  const i = reason.indexOf(':');
  return i < 0 ? reason : reason.slice(0, i);
}

export interface Verdict {
  passed: boolean;
  reasons: string[];
  /** The outcome of every failToPass and passToPass id. */
  perTest: Record<string, GradedOutcome>;
  /** Distinct tests the reports named, plus the ones they counted without naming. */
  collected: number;
  expectedCollected: number;
  counts: Record<TestOutcome, number>;
}

/**
 * @example
 * const v = decideVerdict({ failToPass: task.failToPass, passToPass: task.passToPass, reports });
 */
export function decideVerdict(input: { failToPass: readonly string[]; passToPass: readonly string[]; reports: readonly TestReport[]; expectedCollected?: number }): Verdict {
  const index = new TestOutcomeIndex(input.reports.flatMap((r) => r.tests));
  const unnamed = input.reports.reduce((n, r) => n + (r.unnamed ?? 0), 0);
  const collected = index.size + unnamed;
  const expectedCollected = input.expectedCollected ?? new Set([...input.failToPass, ...input.passToPass]).size;
  const perTest: Record<string, GradedOutcome> = {};
  const reasons: string[] = [];
  if (input.reports.length === 0) reasons.push('no-test-report: the test run wrote no report we could read');
  if (input.failToPass.length === 0 && input.passToPass.length === 0) reasons.push('no-tests-to-grade: the task names no failToPass or passToPass test');
  for (const [list, code] of [
    [input.failToPass, 'fail-to-pass-not-passed'],
    [input.passToPass, 'pass-to-pass-not-passed'],
  ] as const) {
    for (const id of list) {
      const outcome = index.lookup(id);
      perTest[id] = outcome;
      if (outcome !== 'passed') reasons.push(`${code}: ${id} (${outcome})`);
    }
  }
  if (collected < expectedCollected) reasons.push(`collected-tests-dropped: ${collected} collected, ${expectedCollected} expected`);
  return { passed: reasons.length === 0, reasons, perTest, collected, expectedCollected, counts: index.counts() };
}
