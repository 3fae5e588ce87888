/**
 * Sweeps' data: the request that starts one (API, CLI, schedule, checkpoint rule), the sweep record the steps keep,
 * and the report (`GET /v1/sweeps/{id}`, `flywheel sweep report`). zod 4: the same schemas validate and document.
 * The step payloads themselves are the TypeScript types of `lib/sweeps/workflow/sweep-steps.ts`.
 */
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { JudgeSummarySchema } from '../harness/eval/criterion-scores.ts';
import { HarnessModeComponent, IntervalSchema, RegistryId, ResultView } from '../registry/schemas.ts';

extendZodWithOpenApi(z);

/**
 * A sweep id is also the Step Functions execution name (80 characters, no spaces or `#`), and its continuations
 * `<id>.r2` … `<id>.r21` must fit too: 80 − 4 = 76.
 */
const SWEEP_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,75}$/;
export const SweepId = z
  .string()
  .regex(SWEEP_ID, 'letters, digits, _ and - only, starting with a letter or digit, at most 76')
  .openapi({ example: 'nightly-2026-12-02' });

/** What started a sweep: a person (or client), the schedule, or a new checkpoint. */
export const SweepTriggerSchema = z.enum(['manual', 'schedule', 'checkpoint']);

const selection = {
  checkpoints: z.array(RegistryId).min(1).max(100).optional().openapi({ description: 'Absent: the newest active checkpoint of each model.' }),
  suites: z.array(RegistryId).min(1).max(100).optional().openapi({ description: 'Absent: every active suite.' }),
  modes: z.array(HarnessModeComponent).min(1).max(2).optional().openapi({ description: 'Absent: strict and lenient.' }),
  attemptsPerTask: z.number().int().min(1).max(100).optional().openapi({ description: "Attempts per task (k of pass@k); absent: the stage's default." }),
};

/** `POST /v1/sweeps` and `flywheel sweep start`. */
export const SweepStartInput = z
  .object({ sweepId: SweepId.optional().openapi({ description: 'Absent: `manual-<time>`. Starting an id again resumes that sweep with the selection it recorded (the answer says what runs).' }), ...selection })
  .strict()
  .openapi('SweepStartInput');

/** The execution input, validated by `validate-sweep` (mirror of `SweepExecutionInput`). */
export const SweepExecutionInputSchema = z
  .object({
    sweepId: SweepId,
    trigger: SweepTriggerSchema,
    ...selection,
    requestedAt: z.iso.datetime({ offset: true }),
    requestedBy: z.string().max(200).optional(),
  })
  .strict();

export const SweepStatusSchema = z.enum(['validated', 'planned', 'succeeded', 'partial', 'failed']).openapi('SweepStatus');
export type SweepStatus = z.infer<typeof SweepStatusSchema>;

/** The resolved selection and bookkeeping of one sweep (`SWEEP#<id>` / `SWEEP`). */
export const SweepRecordSchema = z.object({
  kind: z.literal('sweep'),
  sweepId: z.string(),
  trigger: SweepTriggerSchema,
  requestedAt: z.string(),
  requestedBy: z.string().optional(),
  /** As resolved once by validate-sweep: a resumed sweep keeps them even if newer checkpoints were registered since. */
  checkpoints: z.array(z.string()),
  suites: z.array(z.object({ id: z.string(), version: z.number().int() })),
  modes: z.array(HarnessModeComponent),
  attemptsPerTask: z.number().int(),
  status: SweepStatusSchema,
  validatedAt: z.string(),
  plannedAt: z.string().optional(),
  shardCount: z.number().int().optional(),
  finishedAt: z.string().optional(),
  succeededShards: z.number().int().optional(),
  failedShards: z.number().int().optional(),
});
export type SweepRecordBody = z.infer<typeof SweepRecordSchema>;

export const ComparisonView = z
  .object({
    checkpoint: z.string(),
    suite: z.string(),
    mode: HarnessModeComponent,
    incumbent: z.string().nullable().openapi({ description: 'Null when the suite has no other scored active checkpoint.' }),
    score: z.number().nullable(),
    incumbentScore: z.number().nullable(),
    difference: z.number().nullable().openapi({ description: 'checkpoint − incumbent.' }),
    ci: IntervalSchema.nullable(),
    paired: z.boolean(),
    n: z.number().int(),
    verdict: z
      .enum(['better', 'worse', 'no-difference', 'too-few-tasks', 'incumbent', 'no-incumbent', 'not-scored'])
      .openapi({ description: '`incumbent`: this checkpoint is the one to beat. `too-few-tasks`: the difference rests on fewer tasks than a verdict needs (see `rule`).' }),
    rule: z.string().optional().openapi({ description: 'The rule the verdict followed, in words (absent on comparisons stored before rules were written).' }),
    incumbentSource: z
      .enum(['registry', 'best-active'])
      .optional()
      .openapi({ description: "`registry`: the registry's incumbent (set when an experiment shipped it); `best-active`: the best active checkpoint of earlier sweeps on this suite version." }),
  })
  .openapi('Comparison');
export type Comparison = z.infer<typeof ComparisonView>;

/** A report's status: the sweep record's, or `requested` before validate-sweep wrote one (or when it refused the request). */
export const ReportedSweepStatusSchema = z
  .enum([...SweepStatusSchema.options, 'requested'])
  .openapi('ReportedSweepStatus', { description: '`requested`: started, not validated yet; when the execution has ended, its error says why it was refused.' });

/** A cell's judge-graded attempts (`get-sweep-report.ts` `JudgedCell`). */
export const JudgedCellView = z
  .object({
    checkpoint: z.string(),
    suite: z.string(),
    mode: HarnessModeComponent,
    // A schema of its own (built after the OpenAPI extension) with the shape of the harness's judge summary.
    judge: z.object(JudgeSummarySchema.shape).openapi('JudgeSummary', {
      description:
        'The rubric judge over the cell: attempts judged, the sum and mean of their weighted scores (0–1), and per criterion (key `taskId:criterionId`) how many were judged, passed, failed, not applicable and voided (a quote not in the attempt, no valid answer, budget spent), with the pass rate over those scored.',
    }),
  })
  .openapi('JudgedCell');

export const SweepReportView = z
  .object({
    sweep: z.object({
      sweepId: z.string(),
      status: ReportedSweepStatusSchema,
      trigger: z.string(),
      requestedAt: z.string(),
      requestedBy: z.string().optional(),
      checkpoints: z.array(z.string()),
      suites: z.array(z.object({ id: z.string(), version: z.number().int().optional().openapi({ description: 'Absent until validate-sweep resolved it (`requested`).' }) })),
      modes: z.array(HarnessModeComponent),
      attemptsPerTask: z.number().int().optional().openapi({ description: 'Absent when the request left it to the stage and it is not validated yet.' }),
      shardCount: z.number().int().optional(),
      succeededShards: z.number().int().optional(),
      failedShards: z.number().int().optional(),
      finishedAt: z.string().optional(),
    }),
    execution: z
      .object({ executionId: z.string(), status: z.string(), error: z.string().optional(), cause: z.string().optional() })
      .optional()
      .openapi({ description: 'The workflow execution, when the API can describe it.' }),
    failedShards: z.array(z.object({ shardId: z.string(), checkpoint: z.string(), suite: z.string(), mode: HarnessModeComponent, error: z.string(), reason: z.string().optional() })),
    results: z.array(ResultView),
    comparisons: z.array(ComparisonView),
    saturated: z.array(z.object({ suite: z.string(), score: z.number(), checkpoint: z.string(), usefulLifeDays: z.number().optional() })),
    rules: z
      .object({ verdict: z.string(), saturation: z.string() })
      .optional()
      .openapi({ description: 'The minimum-sample rules behind the comparisons and the saturation check, in words.' }),
    judged: z
      .array(JudgedCellView)
      .optional()
      .openapi({ description: 'Per checkpoint × suite × mode with judge-graded tasks (`grading.by` judge or both): the rubric scores. Absent when the sweep graded none by a judge.' }),
  })
  .openapi('SweepReport');
export type SweepReport = z.infer<typeof SweepReportView>;

export const SweepStarted = z
  .object({ sweepId: z.string(), executionId: z.string(), checkpoints: z.array(z.string()), suites: z.array(z.string()), modes: z.array(HarnessModeComponent) })
  .openapi('SweepStarted');

export const SweepIdParams = z.object({ id: SweepId });
