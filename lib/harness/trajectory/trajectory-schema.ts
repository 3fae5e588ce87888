import { z } from 'zod';
import { ValidationError } from '../../errors.ts';
import { HarnessModeSchema } from '../task/harness-mode.ts';

/**
 * Flywheel trajectory, schema version 1: JSON Lines, one `header` line, then one line per step or event in the
 * order they happened, and one `outcome` line last. Documented in docs/trajectory.md. Training reads this, so
 * changes are additive within a version; anything else bumps `schemaVersion`.
 */
export const TRAJECTORY_SCHEMA_VERSION = 1 as const;
export const TRAJECTORY_FORMAT = 'flywheel.trajectory' as const;

const TokenIds = z.array(z.number().int());

export const ToolCallRecordSchema = z.object({ id: z.string(), name: z.string(), arguments: z.string() });

export const SamplingSchema = z.object({
  temperature: z.number().optional(),
  topP: z.number().optional(),
  topK: z.number().optional(),
  maxTokens: z.number().int().optional(),
  seed: z.number().int().optional(),
  stop: z.array(z.string()).optional(),
});

export const PolicySchema = z.object({
  /** Checkpoint id as the registry names it, e.g. `ckpt-2026-12-01-rl-step-400`. */
  checkpoint: z.string(),
  /** Weight version within a checkpoint lineage (bumps on every weight sync during RL). */
  weightVersion: z.union([z.string(), z.number()]).optional(),
});

export const LimitHitSchema = z.enum(['turns', 'tokens', 'time', 'output', 'cost']);

export const StopReasonSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('submitted'), answer: z.string().optional() }),
  z.object({ kind: z.literal('limit'), limit: LimitHitSchema }),
  /** The model ended its turn without a tool call and without submitting. */
  z.object({ kind: z.literal('no-action') }),
  /** The endpoint rejected the request for good (bad request, context overflow): the model's side. */
  z.object({ kind: z.literal('model-error'), message: z.string() }),
  /** Not the model's fault (endpoint down, sandbox broke): retried, never scored. */
  z.object({ kind: z.literal('infrastructure-error'), error: z.string(), message: z.string() }),
]);
export type StopReason = z.infer<typeof StopReasonSchema>;

export const HeaderLineSchema = z.object({
  type: z.literal('header'),
  format: z.literal(TRAJECTORY_FORMAT),
  schemaVersion: z.literal(TRAJECTORY_SCHEMA_VERSION),
  attemptId: z.string(),
  taskId: z.string().optional(),
  suite: z.string().optional(),
  mode: HarnessModeSchema.optional(),
  agent: z.object({ name: z.string(), version: z.string() }),
  model: z.object({ id: z.string(), name: z.string().optional() }),
  policy: PolicySchema.optional(),
  sampling: SamplingSchema.default({}),
  limits: z.record(z.string(), z.number()).default({}),
  tools: z.array(z.object({ name: z.string(), description: z.string(), parameters: z.record(z.string(), z.unknown()) })).default([]),
  startedAt: z.string(),
  extra: z.record(z.string(), z.unknown()).optional(),
});

/** A system or user message (the instruction, a harness nudge). */
export const MessageLineSchema = z.object({
  type: z.literal('message'),
  seq: z.number().int(),
  at: z.string(),
  messageId: z.string(),
  role: z.enum(['system', 'user']),
  content: z.string(),
});

/** One model call and its answer. */
export const AssistantLineSchema = z.object({
  type: z.literal('assistant'),
  seq: z.number().int(),
  at: z.string(),
  /** Stable id (`<attemptId>:m<turn>`); events and tool results point at it. */
  messageId: z.string(),
  turn: z.number().int(),
  content: z.string(),
  reasoning: z.string().optional(),
  toolCalls: z.array(ToolCallRecordSchema),
  finishReason: z.string(),
  rawFinishReason: z.string().optional(),
  model: z.string(),
  responseId: z.string().optional(),
  policy: PolicySchema.optional(),
  sampling: SamplingSchema.default({}),
  usage: z.object({ promptTokens: z.number().int(), completionTokens: z.number().int(), cachedTokens: z.number().int().optional() }),
  /** Exactly what the server sampled, when it returned them (never re-tokenised). */
  tokens: z.object({ promptTokenIds: TokenIds.optional(), completionTokenIds: TokenIds.optional(), logprobs: z.array(z.number()).optional() }).optional(),
  costUsd: z.number().optional(),
  timing: z.object({ startedAt: z.string(), durationMs: z.number(), httpAttempts: z.number().int() }),
});

export const ToolResultLineSchema = z.object({
  type: z.literal('tool_result'),
  seq: z.number().int(),
  at: z.string(),
  /** The assistant message whose call this answers. */
  messageId: z.string(),
  toolCallId: z.string(),
  name: z.string(),
  isError: z.boolean(),
  content: z.string(),
  truncated: z.boolean().default(false),
  exitCode: z.number().int().nullable().optional(),
  durationMs: z.number(),
});

/** Where in an assistant message an event points: a tool call, and optionally a character range of its arguments. */
export const SpanSchema = z.object({
  toolCallId: z.string().optional(),
  field: z.enum(['content', 'arguments']).default('arguments'),
  start: z.number().int(),
  end: z.number().int(),
});

export const EventLineSchema = z.object({
  type: z.literal('event'),
  seq: z.number().int(),
  at: z.string(),
  /** `tool.unknown`, `tool.bad-arguments`, `limit.hit`, `network.blocked`, `test-file.edited`, …; a behavioural case adds `BEHAVIOUR_EVENT_KINDS` (`./behaviour-events.ts`). */
  kind: z.string(),
  messageId: z.string().optional(),
  span: SpanSchema.optional(),
  message: z.string(),
  detail: z.record(z.string(), z.unknown()).default({}),
});

export const OutcomeLineSchema = z.object({
  type: z.literal('outcome'),
  seq: z.number().int(),
  at: z.string(),
  stopReason: StopReasonSchema,
  limitsHit: z.array(LimitHitSchema).default([]),
  turns: z.number().int(),
  usage: z.object({ promptTokens: z.number().int(), completionTokens: z.number().int(), cachedTokens: z.number().int().default(0) }),
  /** The simulated user's model's tokens (behavioural cases with a simulated user), apart from the policy's `usage`. */
  userUsage: z.object({ promptTokens: z.number().int(), completionTokens: z.number().int(), cachedTokens: z.number().int().default(0) }).optional(),
  outputBytes: z.number().int(),
  costUsd: z.number().optional(),
  durationMs: z.number(),
  /** The agent's changes against the base commit (git patch). */
  diff: z.string().optional(),
});

export const StepLineSchema = z.discriminatedUnion('type', [MessageLineSchema, AssistantLineSchema, ToolResultLineSchema, EventLineSchema, OutcomeLineSchema]);

export type HeaderLine = z.infer<typeof HeaderLineSchema>;
export type MessageLine = z.infer<typeof MessageLineSchema>;
export type AssistantLine = z.infer<typeof AssistantLineSchema>;
export type ToolResultLine = z.infer<typeof ToolResultLineSchema>;
export type EventLine = z.infer<typeof EventLineSchema>;
export type OutcomeLine = z.infer<typeof OutcomeLineSchema>;
export type StepLine = z.infer<typeof StepLineSchema>;

export interface Trajectory {
  header: HeaderLine;
  steps: StepLine[];
}

/** Serialises a trajectory as JSON Lines (header first). */
export function toJsonl(trajectory: Trajectory): string {
  return [trajectory.header, ...trajectory.steps].map((l) => JSON.stringify(l)).join('\n') + '\n';
}

/** Parses and validates JSON Lines; errors name the line number and field. */
export function parseJsonl(text: string): Trajectory {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const issues: Array<{ path: string; message: string }> = [];
  const parsed: unknown[] = lines.map((l, i) => {
    try {
      return JSON.parse(l) as unknown;
    } catch {
      issues.push({ path: `line ${i + 1}`, message: 'invalid JSON' });
      return undefined;
    }
  });
  const header = HeaderLineSchema.safeParse(parsed[0]);
  if (!header.success) for (const i of header.error.issues) issues.push({ path: `line 1.${i.path.join('.')}`, message: i.message });
  const steps: StepLine[] = [];
  parsed.slice(1).forEach((p, i) => {
    const r = StepLineSchema.safeParse(p);
    if (r.success) steps.push(r.data);
    else for (const e of r.error.issues) issues.push({ path: `line ${i + 2}.${e.path.join('.')}`, message: e.message });
  });
  if (issues.length > 0 || !header.success) throw new ValidationError(`invalid trajectory: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
  return { header: header.data, steps };
}
