import type { BlobsPort } from '../../ports/blobs.ts';
import type { ModelsPort } from '../../ports/models.ts';
import { buildAttemptView } from '../../judges/rubric/attempt-view.ts';
import { defaultRubricJudge, judgeAttempt, type JudgeBudget } from '../../judges/rubric/judge-attempt.ts';
import type { JudgeDefinition } from '../../judges/judge-identity.ts';
import type { Judgement } from '../../judges/schemas.ts';
import { gradeAttempt } from '../grading/grade-attempt.ts';
import { sandboxTestRunner } from '../grading/sandbox-test-runner.ts';
import type { GradeResult } from '../grading/schemas.ts';
import type { TestRunner } from '../grading/test-runner.ts';
import type { SandboxProvider } from '../sandbox/sandbox.ts';
import { gradedByJudge, gradedByTests, passesGradingRule } from '../task/grading-schema.ts';
import type { Task } from '../task/task-schema.ts';
import type { AttemptGrade } from './attempt-record.ts';
import type { AttemptGrader, GradeRequest } from './run-attempt.ts';

/** The judge a grader asks for judge-graded tasks. */
export interface GraderJudge {
  model: ModelsPort;
  /** Default `defaultRubricJudge(model.id)`; the task's rubric replaces its rubric (so the version follows it). */
  definition?: JudgeDefinition;
  budget?: JudgeBudget;
  maxAttempts?: number;
  pricing?: { promptPerMillion: number; completionPerMillion: number };
}

export interface HarnessGraderOptions {
  provider: SandboxProvider;
  blobs?: BlobsPort;
  runTests?: TestRunner;
  /** Without it, a task graded by a judge cannot be graded (`ungradableReason`). */
  judge?: GraderJudge;
}

/** A grader that can say, before an attempt runs, why it cannot grade a task (`runEval` then leaves it ungraded). */
export type HarnessGrader = AttemptGrader & { ungradable(task: Task): string | undefined };

/** A reason code (see `REASON_CODES`) and its line when a task needs a judge and none is configured. */
export function judgeNotConfigured(task: Task): string {
  return `judge-not-configured: task ${task.id} is graded by '${task.grading?.by}' and no judge model is configured (--judge-model or FLYWHEEL_JUDGE_MODEL)`;
}

/**
 * Why `grader` cannot grade `task` (a judge-graded task and no judge), or undefined when it can (or when the grader
 * does not say).
 *
 * @example
 * const why = ungradableReason(grade, task); // 'judge-not-configured: …' | undefined
 */
export function ungradableReason(grader: AttemptGrader | undefined, task: Task): string | undefined {
  if (!grader || !('ungradable' in grader) || typeof grader.ungradable !== 'function') return undefined;
  return (grader as HarnessGrader).ungradable(task);
}

/**
 * The grader an eval uses, by the task's rule (`task.grading`; absent: tests):
 * - tests: `gradeAttempt` (pristine copy + the diff, test files reverted, per-test reports), with the tests run in a
 *   fresh strict sandbox of the same provider — the tests execute the agent's code — and the test log stored in
 *   blobs; in strict mode the diff's flags aimed at the verdict fail the attempt;
 * - judge: the rubric judge (`judgeAttempt`) reads the attempt (instruction, trajectory excerpt, diff, final message,
 *   and the test outcomes when tests ran too). No tests run for a judge-only task (no sandbox is opened for them);
 * - both: the tests, then the judge, who sees their outcomes.
 * The verdict is the task's rule: all tests pass (when tests grade) and score ≥ `grading.minScore` (when a judge
 * grades). The judgement is stored on the grade (`grade.judgement`); a score under the threshold adds the reason
 * `judge-score-below-threshold: 0.5 < 1 (criteria c2 failed)`.
 *
 * What stays a throw (and so an infrastructure error of the try, retried): what `gradeAttempt` throws (a base commit
 * that is gone, a sandbox that will not start), and a judge endpoint that stays down or rejects the request
 * (`ModelUnavailableError`, `ModelRequestError`). A judge that answers but cannot give a valid verdict on a criterion
 * (after its retries, or with its budget spent) is not the agent's failure either, but it is not a pass: the criterion
 * is voided and counts 0 (it could not be shown to pass), the judgement is `complete: false`, and the grade's reasons
 * say `judge-incomplete: …`. A judge-graded task with no judge configured is never passed: `ungradable` names it so
 * `runEval` leaves the attempt `ungraded`; called anyway, the grade fails with `judge-not-configured`.
 *
 * @example
 * const grade = harnessGrader({ provider, blobs: ports.blobs, judge: { model: judgeModel } });
 * await runAttempt({ ...input, grade });
 */
export function harnessGrader(options: HarnessGraderOptions): HarnessGrader {
  const runTests = options.runTests ?? sandboxTestRunner(options.provider);
  const grade = async (request: GradeRequest): Promise<AttemptGrade> => {
    const { task } = request;
    const byTests = gradedByTests(task.grading);
    const byJudge = gradedByJudge(task.grading);
    if (byJudge && !options.judge) {
      return { passed: false, reasons: [judgeNotConfigured(task)], ungraded: true };
    }
    const tests: GradeResult | undefined = byTests
      ? await gradeAttempt({
          task,
          sourceDir: request.sourceDir,
          ...(request.baseCommit ? { baseCommit: request.baseCommit } : {}),
          diff: request.diff,
          attemptId: request.attemptId,
          runTests,
          ...(options.blobs ? { blobs: options.blobs } : {}),
          ...(request.trajectory ? { trajectory: request.trajectory } : {}),
          // Flags aimed at the verdict fail strict attempts; lenient ones record them (the stream's checks fail both).
          strict: request.mode !== 'lenient',
        })
      : undefined;
    if (!byJudge) return tests!;
    const judge = options.judge!;
    const view = buildAttemptView({
      task,
      ...(request.trajectory ? { trajectory: request.trajectory } : {}),
      diff: request.diff,
      ...(tests ? { tests: { passed: tests.passed, reasons: tests.reasons, perTest: tests.perTest } } : {}),
    });
    const judgement = await judgeAttempt(judge.model, view, {
      judge: judge.definition ?? defaultRubricJudge(judge.model.id),
      ...(judge.budget ? { budget: judge.budget } : {}),
      ...(judge.maxAttempts !== undefined ? { maxAttempts: judge.maxAttempts } : {}),
      ...(judge.pricing ? { pricing: judge.pricing } : {}),
    });
    const reasons = [...(tests?.reasons ?? []), ...judgeReasons(judgement, task.grading!.minScore)];
    const passed = passesGradingRule(task.grading, { ...(tests ? { testsPassed: tests.passed } : {}), score: judgement.score });
    return { ...(tests ?? {}), passed, reasons, judgement, ...(tests ? { testsPassed: tests.passed } : {}) };
  };
  return Object.assign(grade, {
    ungradable: (task: Task) => (gradedByJudge(task.grading) && !options.judge ? judgeNotConfigured(task) : undefined),
  });
}

/** The reasons a judgement adds to a grade: the score under the threshold, and voided criteria. */
export function judgeReasons(judgement: Judgement, minScore: number): string[] {
  const reasons: string[] = [];
  if (judgement.score < minScore) {
    const failed = judgement.criteria.filter((c) => c.verdict === 'fail' || c.voided !== undefined).map((c) => c.id);
    reasons.push(`judge-score-below-threshold: ${round(judgement.score)} < ${minScore}${failed.length > 0 ? ` (criteria ${failed.join(', ')} failed)` : ''}`);
  }
  const voided = judgement.criteria.filter((c) => c.voided !== undefined);
  if (voided.length > 0) reasons.push(`judge-incomplete: ${voided.map((c) => `${c.id} voided (${c.voided})`).join('; ')}`);
  return reasons;
}

function round(x: number): string {
  return String(Math.round(x * 1000) / 1000);
}
