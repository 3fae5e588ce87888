/**
 * How a task is graded: by its tests, by a rubric judge, or both, with the rule in the task
 * (`all tests pass and score ≥ minScore`). Tasks without a `grading` field are graded by tests, as before.
 */
import { z } from 'zod';

export const GRADING_METHODS = ['tests', 'judge', 'both'] as const;

export const TaskGradingSchema = z.strictObject({
  by: z.enum(GRADING_METHODS),
  /** The least weighted rubric score in [0, 1] that passes when a judge grades; 1: every criterion passes. */
  minScore: z.number().min(0).max(1).default(1),
  /** The judge (`name` or `name@version` in the judge registry); default the promoted rubric judge. */
  judge: z.string().min(1).max(200).optional(),
});
export type TaskGrading = z.output<typeof TaskGradingSchema>;
