/**
 * The report `compareModes` builds (stored as `COMPARE-MODES` under the run's partition): per model, each mode's
 * score, their paired difference, and the tasks that passed only in lenient mode with the evidence about them. The
 * schemas are the types.
 */
import { z } from 'zod';
import { INTEGRITY_FLAG_KINDS } from '../integrity/integrity-flag.ts';
import { SandboxObservationSchema } from '../sandbox/sandbox.ts';
import { CriterionScoresSchema } from './criterion-scores.ts';
import { StatusCountsSchema } from './eval-results.ts';

export const COMPARE_MODES_VERSION = 1 as const;

export const ModeScoreSchema = z.object({
  /** Mean over tasks with at least one scored attempt; null when none was scored. */
  passAt1: z.number().nullable(),
  scoredTasks: z.number().int(),
  counts: StatusCountsSchema,
  /** Attempts with no record at all (only with `run: false`, or a run that was stopped). */
  missing: z.number().int(),
  /**
   * Failed attempts that failed for integrity (a failed history re-audit, a tampered verdict, a strict-mode flag aimed
   * at the verdict), counted apart from wrong fixes; they are included in `counts.failed`.
   */
  integrityFailures: z.number().int(),
  /** Judge-graded tasks: each rubric criterion's tally and pass rate in this mode, keyed `taskId:criterionId`. */
  criteria: CriterionScoresSchema.optional(),
});
export type ModeScore = z.infer<typeof ModeScoreSchema>;

/** A piece of evidence about a task's attempts, in words plus where it came from. */
export const EvidenceSchema = z.object({
  kind: z.enum([...SandboxObservationSchema.shape.kind.options, ...INTEGRITY_FLAG_KINDS, 'history.recovered', 'integrity.failure']),
  /** e.g. `git log --all -p -- calc.py`, `blocked answers.example.com:80`, `skip-marker calc.py:3`. */
  summary: z.string(),
  /** The attempt numbers it was seen in. */
  attempts: z.array(z.number().int()),
});
export type Evidence = z.infer<typeof EvidenceSchema>;

const TallySchema = z.object({ passed: z.number().int(), scored: z.number().int() });

export const LenientOnlyTaskSchema = z.object({
  taskId: z.string(),
  lenient: TallySchema,
  strict: TallySchema,
  /** What the harness recorded: in lenient mode (what the model used) and in strict mode (what was blocked). */
  evidence: z.object({ lenient: z.array(EvidenceSchema), strict: z.array(EvidenceSchema) }),
});
export type LenientOnlyTask = z.infer<typeof LenientOnlyTaskSchema>;

export const ScoreDifferenceSchema = z.object({
  /** Mean over paired tasks of (lenient pass@1 − strict pass@1); null without paired tasks. */
  estimate: z.number().nullable(),
  /** 95% paired bootstrap percentile interval; null without paired tasks. */
  ci95: z.tuple([z.number(), z.number()]).nullable(),
  /** Tasks scored in both modes. */
  pairedTasks: z.number().int(),
  method: z.literal('paired-bootstrap-percentile'),
  resamples: z.number().int(),
  seed: z.number(),
  /** Exact two-sided sign test over paired tasks whose difference is not zero (null when there is none). */
  signTest: z.object({ positive: z.number().int(), negative: z.number().int(), pValue: z.number().nullable() }),
});
export type ScoreDifference = z.infer<typeof ScoreDifferenceSchema>;

export const ModelComparisonSchema = z.object({
  model: z.string(),
  runId: z.string(),
  strict: ModeScoreSchema,
  lenient: ModeScoreSchema,
  difference: ScoreDifferenceSchema,
  lenientOnly: z.array(LenientOnlyTaskSchema),
  /** Tasks that passed in strict mode but never in lenient (noise, or a lenient-only breakage). */
  strictOnly: z.array(z.string()),
});
export type ModelComparison = z.infer<typeof ModelComparisonSchema>;

export const CompareModesReportSchema = z.object({
  version: z.literal(COMPARE_MODES_VERSION),
  runId: z.string(),
  tasks: z.number().int(),
  attemptsPerTask: z.number().int(),
  models: z.array(ModelComparisonSchema),
  generatedAt: z.string(),
});
export type CompareModesReport = z.infer<typeof CompareModesReportSchema>;
