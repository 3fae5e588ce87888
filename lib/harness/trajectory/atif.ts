import type { AssistantLine, EventLine, HeaderLine, StepLine, ToolResultLine, Trajectory } from './trajectory-schema.ts';
import { HeaderLineSchema, StepLineSchema, TRAJECTORY_FORMAT, TRAJECTORY_SCHEMA_VERSION } from './trajectory-schema.ts';

/**
 * Harbor's Agent Trajectory Interchange Format (ATIF v1.4, harborframework.com/docs/trajectory-format).
 * Export maps each assistant line to an `agent` step (tool_calls, observation.results from its tool results,
 * metrics with prompt/completion token ids and logprobs); the Flywheel lines ATIF has no place for (events,
 * the outcome, policy, sampling, timings, messageIds) ride in `extra.flywheel`, so `fromAtif(toAtif(t))`
 * gives `t` back. Import of a foreign ATIF file (no `extra.flywheel`) builds the lines from the steps.
 */
export const ATIF_VERSION = 'ATIF-v1.4';

export interface AtifToolCall {
  tool_call_id: string;
  function_name: string;
  arguments: Record<string, unknown>;
}
export interface AtifStep {
  step_id: number;
  timestamp?: string;
  source: 'system' | 'user' | 'agent';
  model_name?: string;
  message: string;
  reasoning_content?: string;
  tool_calls?: AtifToolCall[];
  observation?: { results: Array<{ source_call_id?: string; content?: string }> };
  metrics?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    cached_tokens?: number;
    cost_usd?: number;
    prompt_token_ids?: number[];
    completion_token_ids?: number[];
    logprobs?: number[];
    extra?: Record<string, unknown>;
  };
  extra?: Record<string, unknown>;
}
export interface AtifTrajectory {
  schema_version: string;
  session_id: string;
  agent: { name: string; version: string; model_name?: string; extra?: Record<string, unknown> };
  steps: AtifStep[];
  notes?: string;
  final_metrics?: { total_prompt_tokens?: number; total_completion_tokens?: number; total_cached_tokens?: number; total_cost_usd?: number; total_steps?: number; extra?: Record<string, unknown> };
  extra?: Record<string, unknown>;
}

function argsObject(text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    /* ATIF wants an object: keep the raw text */
  }
  return { _raw: text };
}

export function toAtif(trajectory: Trajectory): AtifTrajectory {
  const { header, steps } = trajectory;
  const results = new Map<string, ToolResultLine[]>();
  for (const s of steps) if (s.type === 'tool_result') results.set(s.messageId, [...(results.get(s.messageId) ?? []), s]);
  const atifSteps: AtifStep[] = [];
  let prompt = 0;
  let completion = 0;
  let cached = 0;
  for (const s of steps) {
    if (s.type === 'message') {
      atifSteps.push({ step_id: atifSteps.length + 1, timestamp: s.at, source: s.role, message: s.content, extra: { flywheel: s } });
    } else if (s.type === 'assistant') {
      prompt += s.usage.promptTokens;
      completion += s.usage.completionTokens;
      cached += s.usage.cachedTokens ?? 0;
      const res = results.get(s.messageId) ?? [];
      atifSteps.push({
        step_id: atifSteps.length + 1,
        timestamp: s.at,
        source: 'agent',
        model_name: s.model,
        message: s.content,
        ...(s.reasoning ? { reasoning_content: s.reasoning } : {}),
        ...(s.toolCalls.length > 0 ? { tool_calls: s.toolCalls.map((c) => ({ tool_call_id: c.id, function_name: c.name, arguments: argsObject(c.arguments) })) } : {}),
        ...(res.length > 0 ? { observation: { results: res.map((r) => ({ source_call_id: r.toolCallId, content: r.content })) } } : {}),
        metrics: {
          prompt_tokens: s.usage.promptTokens,
          completion_tokens: s.usage.completionTokens,
          ...(s.usage.cachedTokens !== undefined ? { cached_tokens: s.usage.cachedTokens } : {}),
          ...(s.costUsd !== undefined ? { cost_usd: s.costUsd } : {}),
          ...(s.tokens?.promptTokenIds ? { prompt_token_ids: s.tokens.promptTokenIds } : {}),
          ...(s.tokens?.completionTokenIds ? { completion_token_ids: s.tokens.completionTokenIds } : {}),
          ...(s.tokens?.logprobs ? { logprobs: s.tokens.logprobs } : {}),
        },
        extra: { flywheel: s, toolResults: res },
      });
    }
  }
  const others = steps.filter((s): s is EventLine | Extract<StepLine, { type: 'outcome' }> => s.type === 'event' || s.type === 'outcome');
  return {
    schema_version: ATIF_VERSION,
    session_id: header.attemptId,
    agent: { name: header.agent.name, version: header.agent.version, ...(header.model.name ? { model_name: header.model.name } : {}) },
    steps: atifSteps,
    final_metrics: { total_prompt_tokens: prompt, total_completion_tokens: completion, total_cached_tokens: cached, total_steps: atifSteps.length },
    extra: { flywheel: { header, lines: others } },
  };
}

/** Reads ATIF (ours or anyone's) into a Flywheel trajectory. */
export function fromAtif(atif: AtifTrajectory): Trajectory {
  const fw = atif.extra?.['flywheel'] as { header?: unknown; lines?: unknown[] } | undefined;
  const header: HeaderLine = fw?.header
    ? HeaderLineSchema.parse(fw.header)
    : HeaderLineSchema.parse({
        type: 'header',
        format: TRAJECTORY_FORMAT,
        schemaVersion: TRAJECTORY_SCHEMA_VERSION,
        attemptId: atif.session_id,
        agent: { name: atif.agent.name, version: atif.agent.version },
        model: { id: atif.agent.model_name ?? 'unknown', ...(atif.agent.model_name ? { name: atif.agent.model_name } : {}) },
        startedAt: atif.steps[0]?.timestamp ?? new Date(0).toISOString(),
        extra: { importedFrom: atif.schema_version },
      });
  const steps: StepLine[] = [];
  for (const step of atif.steps) {
    const own = step.extra?.['flywheel'];
    if (own) {
      steps.push(StepLineSchema.parse(own));
      for (const r of (step.extra?.['toolResults'] as unknown[] | undefined) ?? []) steps.push(StepLineSchema.parse(r));
      continue;
    }
    const at = step.timestamp ?? header.startedAt;
    const messageId = `${header.attemptId}:s${step.step_id}`;
    if (step.source !== 'agent') {
      steps.push({ type: 'message', seq: 0, at, messageId, role: step.source, content: step.message });
      continue;
    }
    const m = step.metrics ?? {};
    const assistant: AssistantLine = {
      type: 'assistant',
      seq: 0,
      at,
      messageId,
      turn: steps.filter((s) => s.type === 'assistant').length + 1,
      content: step.message,
      ...(step.reasoning_content ? { reasoning: step.reasoning_content } : {}),
      toolCalls: (step.tool_calls ?? []).map((c) => ({ id: c.tool_call_id, name: c.function_name, arguments: JSON.stringify(c.arguments) })),
      finishReason: (step.tool_calls?.length ?? 0) > 0 ? 'tool_calls' : 'stop',
      model: step.model_name ?? header.model.id,
      sampling: {},
      usage: { promptTokens: m.prompt_tokens ?? 0, completionTokens: m.completion_tokens ?? 0, ...(m.cached_tokens !== undefined ? { cachedTokens: m.cached_tokens } : {}) },
      ...(m.prompt_token_ids || m.completion_token_ids || m.logprobs
        ? { tokens: { ...(m.prompt_token_ids ? { promptTokenIds: m.prompt_token_ids } : {}), ...(m.completion_token_ids ? { completionTokenIds: m.completion_token_ids } : {}), ...(m.logprobs ? { logprobs: m.logprobs } : {}) } }
        : {}),
      ...(m.cost_usd !== undefined ? { costUsd: m.cost_usd } : {}),
      timing: { startedAt: at, durationMs: 0, httpAttempts: 1 },
    };
    steps.push(assistant);
    for (const r of step.observation?.results ?? []) {
      const call = step.tool_calls?.find((c) => c.tool_call_id === r.source_call_id);
      steps.push({ type: 'tool_result', seq: 0, at, messageId, toolCallId: r.source_call_id ?? '', name: call?.function_name ?? '', isError: false, content: r.content ?? '', truncated: false, durationMs: 0 });
    }
  }
  for (const l of fw?.lines ?? []) steps.push(StepLineSchema.parse(l));
  if (fw?.header) steps.sort((a, b) => a.seq - b.seq);
  else steps.forEach((s, i) => (s.seq = i + 1));
  return { header, steps };
}
