/**
 * How a task is graded: by its tests, by a rubric judge, or both, with the rule in the task
 * (`all tests pass (when tests grade) and score ≥ minScore (when a judge grades)`). Tasks without a `grading` field
 * are graded by tests, as before. A task graded by a judge alone needs no `testCommand` (no tests run for it); a task
 * graded by a judge (alone or with tests) needs a `rubric` (`task-schema.ts` checks both, naming the field).
 */
import { z } from 'zod';

export const GRADING_METHODS = ['tests', 'judge', 'both'] as const;
export type GradingMethod = (typeof GRADING_METHODS)[number];

export const TaskGradingSchema = z.strictObject({
  by: z.enum(GRADING_METHODS),
  /** The least weighted rubric score in [0, 1] that passes when a judge grades; 1: every criterion passes. */
  minScore: z.number().min(0).max(1).default(1),
  /** The judge (`name` or `name@version` in the judge registry); default the promoted rubric judge. */
  judge: z.string().min(1).max(200).optional(),
});
export type TaskGrading = z.output<typeof TaskGradingSchema>;

/** Whether the task's tests take part in its verdict (no `grading`: yes). */
export function gradedByTests(grading: TaskGrading | undefined): boolean {
  return grading === undefined || grading.by !== 'judge';
}

/** Whether a rubric judge takes part in the task's verdict. */
export function gradedByJudge(grading: TaskGrading | undefined): boolean {
  return grading !== undefined && grading.by !== 'tests';
}

/**
 * The rule: all tests pass (when tests grade) and score ≥ minScore (when a judge grades).
 *
 * @example
 * passesGradingRule({ by: 'both', minScore: 1 }, { testsPassed: true, score: 0.5 }); // false
 */
export function passesGradingRule(grading: TaskGrading | undefined, outcome: { testsPassed?: boolean; score?: number }): boolean {
  if (gradedByTests(grading) && outcome.testsPassed !== true) return false;
  if (gradedByJudge(grading) && !(outcome.score !== undefined && outcome.score >= grading!.minScore)) return false;
  return true;
}
