import type { ChatMessage, ChatResponse, ModelsPort, SamplingParams, ToolCall } from '../../ports/models.ts';
import { FlywheelError } from '../../errors.ts';
import { ModelRequestError, ModelUnavailableError } from '../../models/model-errors.ts';
import type { SandboxSession } from '../sandbox/sandbox.ts';
import type { LimitKind, TaskLimits } from '../task/task-schema.ts';
import { InfrastructureErrorNames } from '../trajectory/infrastructure-errors.ts';
import { TrajectoryRecorder } from '../trajectory/trajectory-recorder.ts';
import { TRAJECTORY_FORMAT, TRAJECTORY_SCHEMA_VERSION, type StopReason, type Trajectory } from '../trajectory/trajectory-schema.ts';
import { DEFAULT_TOOLS, toolDefinitions, type AgentTool } from './agent-tools.ts';

/**
 * The agent loop (Inspect AI's basic agent: a solver that calls the model, runs its tool calls, feeds results back)
 * with one limit taxonomy — turns, tokens, time, output, cost — each stop naming its limit.
 *
 * Errors are sorted by whose they are: an unknown tool or bad arguments go back to the model as a tool error and
 * are recorded as events (`tool.unknown`, `tool.bad-arguments`) pointing at the messageId and span; a model endpoint
 * that stays down or a sandbox that breaks ends the attempt as `infrastructure-error` (retry it, never score it).
 *
 * @example
 * const result = await runAgent({ attemptId, instruction: task.instruction, model, sandbox, limits: task.limits });
 * await storeTrajectory(ports.blobs, result.trajectory);
 */
export interface RunAgentInput {
  attemptId: string;
  instruction: string;
  model: ModelsPort;
  sandbox: SandboxSession;
  limits: TaskLimits;
  tools?: readonly AgentTool[];
  systemPrompt?: string;
  sampling?: SamplingParams;
  policy?: { checkpoint: string; weightVersion?: string | number };
  /** Dollars per million prompt / completion tokens, for the cost limit. */
  pricing?: { promptPerMillion: number; completionPerMillion: number };
  taskId?: string;
  suite?: string;
  agent?: { name: string; version: string };
  /** Said when the model answers without a tool call (Inspect's continue message). */
  continueMessage?: string;
  /** End the attempt (`no-action`) when the model answers without a tool call, instead of nudging it on. */
  stopOnNoAction?: boolean;
  now?: () => Date;
}

export interface AgentUsage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

export interface RunAgentResult {
  attemptId: string;
  stopReason: StopReason;
  /** True when the stop is not the model's doing: retry the attempt, report it apart, never score it. */
  infrastructureError: boolean;
  turns: number;
  usage: AgentUsage;
  outputBytes: number;
  costUsd?: number;
  durationMs: number;
  diff?: string;
  trajectory: Trajectory;
}

export const DEFAULT_SYSTEM_PROMPT =
  'You are a coding agent working in a repository checkout (your working directory). Use the tools to inspect and ' +
  'change files and to run commands. When the task is done, call submit.';

const DEFAULT_CONTINUE = 'Please proceed with the task using the tools, and call submit when you are done.';

class StopAttempt extends Error {
  readonly reason: StopReason;
  constructor(reason: StopReason) {
    super(reason.kind);
    this.reason = reason;
  }
}

export async function runAgent(input: RunAgentInput): Promise<RunAgentResult> {
  const now = input.now ?? (() => new Date());
  const tools = input.tools ?? DEFAULT_TOOLS;
  const byName = new Map(tools.map((t) => [t.name, t]));
  const definitions = toolDefinitions(tools);
  const sampling = input.sampling ?? {};
  const started = now();
  const deadline = started.getTime() + input.limits.wallClockSeconds * 1000;
  const recorder = new TrajectoryRecorder(
    {
      type: 'header',
      format: TRAJECTORY_FORMAT,
      schemaVersion: TRAJECTORY_SCHEMA_VERSION,
      attemptId: input.attemptId,
      ...(input.taskId ? { taskId: input.taskId } : {}),
      ...(input.suite ? { suite: input.suite } : {}),
      mode: input.sandbox.mode,
      agent: input.agent ?? { name: 'flywheel-basic-agent', version: '1' },
      model: { id: input.model.id },
      ...(input.policy ? { policy: input.policy } : {}),
      sampling,
      limits: Object.fromEntries(Object.entries(input.limits).filter(([, v]) => typeof v === 'number')) as Record<string, number>,
      tools: definitions,
      startedAt: started.toISOString(),
    },
    now,
  );

  const usage: AgentUsage = { promptTokens: 0, completionTokens: 0, cachedTokens: 0 };
  let turns = 0;
  let outputBytes = 0;
  let costUsd = input.pricing ? 0 : undefined;
  const limitsHit: LimitKind[] = [];

  const messages: ChatMessage[] = [
    { role: 'system', content: input.systemPrompt ?? DEFAULT_SYSTEM_PROMPT },
    { role: 'user', content: input.instruction },
  ];
  recorder.message({ messageId: `${input.attemptId}:sys`, role: 'system', content: messages[0]!.content });
  recorder.message({ messageId: `${input.attemptId}:task`, role: 'user', content: input.instruction });

  const hit = (limit: LimitKind, messageId?: string, detail: Record<string, unknown> = {}): never => {
    limitsHit.push(limit);
    recorder.event({ kind: 'limit.hit', ...(messageId ? { messageId } : {}), message: `${limit} limit reached`, detail });
    throw new StopAttempt({ kind: 'limit', limit });
  };
  const checkBudgets = (messageId?: string) => {
    const total = usage.promptTokens + usage.completionTokens;
    if (total >= input.limits.tokens) hit('tokens', messageId, { used: total, limit: input.limits.tokens });
    if (input.limits.costUsd !== undefined && costUsd !== undefined && costUsd >= input.limits.costUsd) hit('cost', messageId, { used: costUsd, limit: input.limits.costUsd });
    if (outputBytes >= input.limits.outputBytes) hit('output', messageId, { used: outputBytes, limit: input.limits.outputBytes });
    if (now().getTime() >= deadline) hit('time', messageId, { limitSeconds: input.limits.wallClockSeconds });
  };

  let stopReason: StopReason;
  try {
    for (;;) {
      checkBudgets();
      if (turns >= input.limits.turns) hit('turns', undefined, { limit: input.limits.turns });
      turns++;
      const messageId = `${input.attemptId}:m${turns}`;
      const callStarted = now();
      let reply: ChatResponse;
      const remaining = Math.max(1, deadline - callStarted.getTime());
      try {
        reply = await input.model.chat({ messages, tools: definitions, sampling, signal: AbortSignal.timeout(remaining) });
      } catch (error) {
        if (now().getTime() >= deadline || (error as Error)?.name === 'TimeoutError') hit('time', messageId, { during: 'model call' });
        if (error instanceof ModelUnavailableError) throw new StopAttempt({ kind: 'infrastructure-error', error: error.name, message: error.message });
        if (error instanceof ModelRequestError) throw new StopAttempt({ kind: 'model-error', message: error.message });
        throw error;
      }
      usage.promptTokens += reply.usage.promptTokens;
      usage.completionTokens += reply.usage.completionTokens;
      usage.cachedTokens += reply.usage.cachedTokens ?? 0;
      const stepCost = input.pricing
        ? (reply.usage.promptTokens * input.pricing.promptPerMillion + reply.usage.completionTokens * input.pricing.completionPerMillion) / 1e6
        : undefined;
      if (stepCost !== undefined) costUsd = (costUsd ?? 0) + stepCost;
      recorder.assistant({
        messageId,
        turn: turns,
        content: reply.message.content,
        ...(reply.message.reasoning ? { reasoning: reply.message.reasoning } : {}),
        toolCalls: reply.message.toolCalls,
        finishReason: reply.finishReason,
        ...(reply.rawFinishReason ? { rawFinishReason: reply.rawFinishReason } : {}),
        model: reply.model,
        ...(reply.responseId ? { responseId: reply.responseId } : {}),
        ...(input.policy ? { policy: input.policy } : {}),
        sampling,
        usage: reply.usage,
        ...(reply.tokens ? { tokens: reply.tokens } : {}),
        ...(stepCost !== undefined ? { costUsd: stepCost } : {}),
        timing: { startedAt: callStarted.toISOString(), durationMs: now().getTime() - callStarted.getTime(), httpAttempts: reply.attempts },
      });
      messages.push({ role: 'assistant', content: reply.message.content, toolCalls: reply.message.toolCalls });

      if (reply.message.toolCalls.length === 0) {
        if (input.stopOnNoAction) throw new StopAttempt({ kind: 'no-action' });
        checkBudgets(messageId);
        const nudge = input.continueMessage ?? DEFAULT_CONTINUE;
        messages.push({ role: 'user', content: nudge });
        recorder.message({ messageId: `${messageId}:continue`, role: 'user', content: nudge });
        continue;
      }

      let submitted: { answer?: string } | undefined;
      for (const call of reply.message.toolCalls) {
        const outcome = await runToolCall(call, messageId);
        if (outcome.submitted) submitted = outcome.submitted;
      }
      if (submitted) throw new StopAttempt({ kind: 'submitted', ...(submitted.answer !== undefined ? { answer: submitted.answer } : {}) });
      checkBudgets(messageId);
    }
  } catch (error) {
    if (error instanceof StopAttempt) stopReason = error.reason;
    else
      stopReason = {
        kind: 'infrastructure-error',
        error: error instanceof FlywheelError ? error.name : InfrastructureErrorNames.sandbox,
        message: error instanceof Error ? error.message : String(error),
      };
  }

  let diff: string | undefined;
  try {
    diff = await input.sandbox.diff();
  } catch (error) {
    recorder.event({ kind: 'diff.failed', message: (error as Error).message, detail: {} });
    if (stopReason.kind !== 'infrastructure-error') stopReason = { kind: 'infrastructure-error', error: InfrastructureErrorNames.sandbox, message: `diff failed: ${(error as Error).message}` };
  }
  const durationMs = now().getTime() - started.getTime();
  const summary = {
    stopReason,
    turns,
    usage,
    outputBytes,
    ...(costUsd !== undefined ? { costUsd } : {}),
    durationMs,
    ...(diff !== undefined ? { diff } : {}),
  };
  recorder.outcome({ ...summary, limitsHit });
  return {
    attemptId: input.attemptId,
    ...summary,
    infrastructureError: stopReason.kind === 'infrastructure-error',
    trajectory: recorder.toTrajectory(),
  };

  async function runToolCall(call: ToolCall, messageId: string): Promise<{ submitted?: { answer?: string } }> {
    const t0 = now();
    const answer = (content: string, isError: boolean, extra: { truncated?: boolean; exitCode?: number | null } = {}) => {
      outputBytes += Buffer.byteLength(content);
      messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content, isError });
      recorder.toolResult({ messageId, toolCallId: call.id, name: call.name, isError, content, truncated: extra.truncated ?? false, ...(extra.exitCode !== undefined ? { exitCode: extra.exitCode } : {}), durationMs: now().getTime() - t0.getTime() });
    };
    const span = { toolCallId: call.id, field: 'arguments' as const, start: 0, end: call.arguments.length };
    const tool = byName.get(call.name);
    if (!tool) {
      const message = `Error: there is no tool named "${call.name}". Available tools: ${[...byName.keys()].join(', ')}.`;
      recorder.event({ kind: 'tool.unknown', messageId, span, message, detail: { tool: call.name } });
      answer(message, true);
      return {};
    }
    let json: unknown;
    try {
      json = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
    } catch (error) {
      const message = `Error: the arguments of ${call.name} are not valid JSON (${(error as Error).message}). Expected: ${JSON.stringify(toolDefinitions([tool])[0]!.parameters)}`;
      recorder.event({ kind: 'tool.bad-arguments', messageId, span, message, detail: { tool: call.name, reason: 'invalid-json' } });
      answer(message, true);
      return {};
    }
    const parsed = tool.schema.safeParse(json);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(arguments)'}: ${i.message}`);
      const message = `Error: bad arguments for ${call.name}: ${issues.join('; ')}. Expected: ${JSON.stringify(toolDefinitions([tool])[0]!.parameters)}`;
      recorder.event({ kind: 'tool.bad-arguments', messageId, span, message, detail: { tool: call.name, issues } });
      answer(message, true);
      return {};
    }
    const timeLeft = deadline - now().getTime();
    if (timeLeft <= 0) hit('time', messageId, { during: 'tool call' });
    const outcome = await tool.run(parsed.data, { sandbox: input.sandbox, timeoutMs: Math.min(input.limits.commandSeconds * 1000, timeLeft) });
    answer(outcome.content, outcome.isError, { ...(outcome.truncated !== undefined ? { truncated: outcome.truncated } : {}), ...(outcome.exitCode !== undefined ? { exitCode: outcome.exitCode } : {}) });
    if (outcome.limit === 'time' && now().getTime() >= deadline) hit('time', messageId, { during: 'tool call' });
    return outcome.submitted ? { submitted: outcome.submitted } : {};
  }
}
