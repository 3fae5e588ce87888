/**
 * The console's views of eval attempts (`GET /v1/attempts`, `GET /v1/attempts/{id}`): a summary per attempt for the
 * list, and the detail the attempt viewer shows (the trajectory with its tool calls, the diff, test outcomes,
 * integrity flags, judge verdicts, decision records). zod 4: the same schemas validate the query and document the
 * answer. Everything is bounded: a trajectory comes a page of steps at a time and every long text is cut with a
 * marker (`truncated: true` and the full size), never sent whole.
 *
 * Attempts are found through sweeps (a sweep's shard parts name the eval runs its jobs wrote): an eval run started
 * outside a sweep (`flywheel eval run`) is not listed here.
 */
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { ATTEMPT_STATUSES } from '../harness/attempt/attempt-record.ts';
import { HarnessModeComponent, RegistryId } from './schemas.ts';

extendZodWithOpenApi(z);

/** Bytes of one text field (a message, a tool result, a tool call's arguments) sent at most; the rest is cut. */
export const MAX_TEXT_BYTES = 16 * 1024;
/** Bytes of the diff sent at most. */
export const MAX_DIFF_BYTES = 256 * 1024;
/** Trajectory steps per answer at most (`stepLimit`). */
export const MAX_STEPS_PER_PAGE = 500;
/** Attempts per page at most (`limit`). */
export const MAX_ATTEMPTS_PER_PAGE = 200;

export const AttemptOutcomeSchema = z.enum(ATTEMPT_STATUSES).openapi('AttemptOutcome', {
  description: '`infrastructure-error`: not the model\'s doing (retried, never scored); `ungraded`: no verdict could be given.',
});
export type AttemptOutcome = z.infer<typeof AttemptOutcomeSchema>;

/** `GET /v1/attempts` query. */
export const ListAttemptsQuery = z
  .strictObject({
    sweep: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,75}$/, 'a sweep id').optional().openapi({ description: 'Only this sweep. Absent: sweeps newest first.' }),
    checkpoint: RegistryId.optional(),
    suite: RegistryId.optional(),
    task: z.string().min(1).max(300).optional().openapi({ description: 'A task id (exact).' }),
    mode: HarnessModeComponent.optional(),
    outcome: AttemptOutcomeSchema.optional(),
    limit: z.coerce.number().int().min(1).max(MAX_ATTEMPTS_PER_PAGE).default(50),
    cursor: z.string().min(1).max(2048).optional().openapi({ description: 'From the previous page\'s `nextCursor`.' }),
  })
  .openapi('ListAttemptsQuery');
export type ListAttemptsQuery = z.input<typeof ListAttemptsQuery>;

/** `GET /v1/attempts/{id}` query: which page of the trajectory. */
export const GetAttemptQuery = z
  .strictObject({
    stepOffset: z.coerce.number().int().min(0).max(1_000_000).default(0).openapi({ description: 'First trajectory step sent (0-based).' }),
    stepLimit: z.coerce.number().int().min(1).max(MAX_STEPS_PER_PAGE).default(200),
  })
  .openapi('GetAttemptQuery');
export type GetAttemptQuery = z.input<typeof GetAttemptQuery>;

export const AttemptIdParams = z.object({
  id: z.string().min(1).max(2048).openapi({ description: 'An attempt id as `GET /v1/attempts` gives it (opaque, URL-safe).' }),
});

/** A text cut to a size: `text` is the start, `bytes` the whole size. */
export const BoundedTextSchema = z
  .object({ text: z.string(), bytes: z.number().int(), truncated: z.boolean() })
  .openapi('BoundedText');
export type BoundedText = z.infer<typeof BoundedTextSchema>;

export const AttemptSummarySchema = z
  .object({
    id: z.string().openapi({ description: 'Opaque, URL-safe: `GET /v1/attempts/{id}`.' }),
    attemptId: z.string().openapi({ description: 'The harness\'s attempt id (`<runId>.<task>.<mode>.<n>`): decision records and trajectories name it.' }),
    runId: z.string(),
    sweepId: z.string().optional(),
    checkpoint: z.string().optional(),
    suite: z.string(),
    taskId: z.string(),
    mode: HarnessModeComponent,
    n: z.number().int().openapi({ description: '0-based attempt number within (task, mode).' }),
    outcome: AttemptOutcomeSchema,
    stopReason: z.string().optional().openapi({ description: 'The stop reason\'s kind: submitted, limit, no-action, model-error, infrastructure-error.' }),
    integrityFailed: z.boolean(),
    integrityFlags: z.number().int().openapi({ description: 'Integrity flags raised (evidence; not all fail the attempt).' }),
    judgeScore: z.number().nullable(),
    turns: z.number().int(),
    durationMs: z.number(),
    promptTokens: z.number(),
    completionTokens: z.number(),
    tries: z.number().int(),
    model: z.string(),
    startedAt: z.string(),
    finishedAt: z.string(),
  })
  .openapi('AttemptSummary');
export type AttemptSummary = z.infer<typeof AttemptSummarySchema>;

export const AttemptPageSchema = z
  .object({
    attempts: z.array(AttemptSummarySchema),
    nextCursor: z.string().optional().openapi({ description: 'More may follow (a filtered page can be short while more follow).' }),
  })
  .openapi('AttemptPage');
export type AttemptPage = z.infer<typeof AttemptPageSchema>;

export const ToolCallViewSchema = z.object({ id: z.string(), name: z.string(), arguments: BoundedTextSchema }).openapi('ToolCallView');

/** One trajectory line as the viewer shows it (token ids, logprobs and sampling left out). */
export const TrajectoryStepViewSchema = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('message'), seq: z.number().int(), at: z.string(), role: z.enum(['system', 'user']), content: BoundedTextSchema }),
    z.object({
      type: z.literal('assistant'),
      seq: z.number().int(),
      at: z.string(),
      messageId: z.string(),
      turn: z.number().int(),
      content: BoundedTextSchema,
      reasoning: BoundedTextSchema.optional(),
      toolCalls: z.array(ToolCallViewSchema),
      finishReason: z.string(),
      usage: z.object({ promptTokens: z.number(), completionTokens: z.number() }),
      durationMs: z.number(),
    }),
    z.object({
      type: z.literal('tool_result'),
      seq: z.number().int(),
      at: z.string(),
      toolCallId: z.string(),
      name: z.string(),
      isError: z.boolean(),
      exitCode: z.number().int().nullable().optional(),
      content: BoundedTextSchema,
      durationMs: z.number(),
    }),
    z.object({ type: z.literal('event'), seq: z.number().int(), at: z.string(), kind: z.string(), message: BoundedTextSchema, toolCallId: z.string().optional() }),
    z.object({
      type: z.literal('outcome'),
      seq: z.number().int(),
      at: z.string(),
      stopReason: z.string(),
      limitsHit: z.array(z.string()),
      turns: z.number().int(),
      durationMs: z.number(),
      costUsd: z.number().optional(),
    }),
  ])
  .openapi('TrajectoryStepView');
export type TrajectoryStepView = z.infer<typeof TrajectoryStepViewSchema>;

export const TrajectoryPageSchema = z
  .object({
    /** Absent (with `problem`) when the attempt has no trajectory or it cannot be read. */
    available: z.boolean(),
    problem: z.string().optional(),
    agent: z.string().optional(),
    policy: z.string().optional().openapi({ description: 'The checkpoint the trajectory names as its policy.' }),
    totalSteps: z.number().int(),
    stepOffset: z.number().int(),
    steps: z.array(TrajectoryStepViewSchema),
    nextStepOffset: z.number().int().optional().openapi({ description: 'Present when more steps follow: ask again with `stepOffset`.' }),
  })
  .openapi('TrajectoryPage');
export type TrajectoryPage = z.infer<typeof TrajectoryPageSchema>;

export const TestOutcomeViewSchema = z
  .object({ id: z.string(), outcome: z.enum(['passed', 'failed', 'skipped', 'error', 'missing']) })
  .openapi('TestOutcomeView');

export const IntegrityFlagViewSchema = z
  .object({
    kind: z.string(),
    file: z.string(),
    line: z.number().int().nullable(),
    evidence: z.string(),
    source: z.string(),
    messageId: z.string().optional(),
    toolCallId: z.string().optional(),
  })
  .openapi('IntegrityFlagView');

export const JudgeVerdictViewSchema = z
  .object({
    judge: z.string().openapi({ description: 'The judge as `<name>@<version>`.' }),
    score: z.number(),
    complete: z.boolean(),
    criteria: z.array(z.object({ id: z.string(), verdict: z.string(), score: z.number().optional(), reason: z.string(), voided: z.string().optional() })),
  })
  .openapi('JudgeVerdictView');

export const DecisionViewSchema = z
  .object({
    decisionId: z.string(),
    messageId: z.string(),
    turn: z.number().int(),
    hintClass: z.string(),
    hint: z.string(),
    status: z.string(),
    toolCallId: z.string().optional(),
  })
  .openapi('DecisionView');

export const AttemptDetailSchema = z
  .object({
    attempt: AttemptSummarySchema,
    grade: z
      .object({
        passed: z.boolean(),
        reasons: z.array(z.string()),
        tests: z.array(TestOutcomeViewSchema).openapi({ description: 'Every failToPass and passToPass test with its outcome (at most 2,000).' }),
        testsTruncated: z.boolean(),
        counts: z.object({ passed: z.number().int(), failed: z.number().int(), skipped: z.number().int(), error: z.number().int() }).optional(),
      })
      .nullable(),
    integrity: z.object({
      failed: z.boolean(),
      reasons: z.array(z.string()),
      flags: z.array(IntegrityFlagViewSchema),
      observations: z.number().int().openapi({ description: 'What the sandbox blocked or saw (count).' }),
    }),
    judge: JudgeVerdictViewSchema.nullable(),
    decisions: z.array(DecisionViewSchema).openapi({ description: 'Decision records extracted from this attempt (at most 100).' }),
    history: z.array(z.object({ try: z.number().int(), outcome: z.string(), startedAt: z.string(), durationMs: z.number(), error: z.string().optional() })),
    diff: BoundedTextSchema.nullable(),
    trajectory: TrajectoryPageSchema,
  })
  .openapi('AttemptDetail');
export type AttemptDetail = z.infer<typeof AttemptDetailSchema>;
