/**
 * The results of one eval run in one mode (`runEval`'s answer, stored as `RESULTS#<mode>` under the run's partition).
 * The schemas are the types.
 */
import { z } from 'zod';
import { AttemptStatusSchema } from '../attempt/attempt-record.ts';
import { HarnessModeSchema } from '../task/harness-mode.ts';
import { CriterionScoresSchema } from './criterion-scores.ts';

export const TaskResultSchema = z.object({
  taskId: z.string(),
  /** Attempts that were scored (passed or failed). */
  scored: z.number().int(),
  passed: z.number().int(),
  failed: z.number().int(),
  ungraded: z.number().int(),
  infrastructureErrors: z.number().int(),
  passAt1: z.number().nullable(),
  passAtK: z.number().nullable(),
  /** Why the task's attempts were left ungraded (a judge-graded task and no judge configured: `judge-not-configured: …`). */
  ungradedReason: z.string().optional(),
  /** Judge-graded tasks: the mean rubric score of the judged attempts, and each criterion's tally. */
  judgeScore: z.number().nullable().optional(),
  criteria: CriterionScoresSchema.optional(),
});
export type TaskResult = z.infer<typeof TaskResultSchema>;

/** Attempts of each status (every status counted, zero included). */
export const StatusCountsSchema = z.record(AttemptStatusSchema, z.number().int());

export const EvalResultsSchema = z.object({
  runId: z.string(),
  mode: HarnessModeSchema,
  model: z.string(),
  attemptsPerTask: z.number().int(),
  concurrency: z.number().int(),
  tasks: z.number().int(),
  /** Attempts run now and attempts skipped because a finished record existed (a resumed run). */
  ran: z.number().int(),
  skipped: z.number().int(),
  counts: StatusCountsSchema,
  /** Mean over tasks with at least one scored attempt; null when none was. */
  passAt1: z.number().nullable(),
  /** Mean over tasks with at least k scored attempts (k = attemptsPerTask); null when none had. */
  passAtK: z.object({ k: z.number().int(), value: z.number().nullable(), tasks: z.number().int() }),
  /** Tokens over every try of every attempt of the run, infrastructure-error tries included. */
  tokens: z.object({ prompt: z.number(), completion: z.number(), cached: z.number(), total: z.number() }),
  /** Wall clock of this invocation, and the attempts' own durations summed over the run. */
  wallTimeMs: z.number(),
  attemptTimeMs: z.number(),
  perTask: z.array(TaskResultSchema),
  startedAt: z.string(),
  finishedAt: z.string(),
});
export type EvalResults = z.infer<typeof EvalResultsSchema>;
