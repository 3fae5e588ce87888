import type { ChatMessage, ChatResponse, ModelsPort, SamplingParams, ToolCall } from '../../ports/models.ts';
import { ErrorNames, FlywheelError } from '../../errors.ts';
import { ModelRequestError, ModelUnavailableError } from '../../models/model-errors.ts';
import type { SandboxSession } from '../sandbox/sandbox.ts';
import type { LimitKind, TaskLimits } from '../task/task-schema.ts';
import { ASK_USER_TOOL, type ServiceName, type TaskBehaviour } from '../task/behaviour-schema.ts';
import { createServices } from '../services/service-tools.ts';
import { InfrastructureErrorNames } from '../trajectory/infrastructure-errors.ts';
import { TrajectoryRecorder } from '../trajectory/trajectory-recorder.ts';
import { TRAJECTORY_FORMAT, TRAJECTORY_SCHEMA_VERSION, type StopReason, type Trajectory } from '../trajectory/trajectory-schema.ts';
import { DEFAULT_TOOLS, toolDefinitions, type AgentTool, type ToolOutcome } from './agent-tools.ts';
import { describeTrigger, Triggers, type AgentEvent } from './behaviour-triggers.ts';
import { SimulatedUserSession } from './simulated-user.ts';
import { customTool, ToolSchedule } from './tool-schedule.ts';
import { askUserTool, NO_ANSWER, SUBMIT_HELD } from './user-turns.ts';

/**
 * The agent loop (Inspect AI's basic agent: a solver that calls the model, runs its tool calls, feeds results back)
 * with one limit taxonomy — turns, tokens, time, output, cost — each stop naming its limit.
 *
 * Errors are sorted by whose they are: an unknown tool or bad arguments go back to the model as a tool error and
 * are recorded as events (`tool.unknown`, `tool.bad-arguments`) pointing at the messageId and span; a model endpoint
 * that stays down or a sandbox that breaks ends the attempt as `infrastructure-error` (retry it, never score it).
 *
 * A task's `behaviour` (`lib/harness/task/behaviour-schema.ts`) plays around the agent: scripted user turns are
 * injected as user messages after turn n or on an event (`user.turn` events), an `ask_user` call is answered by a
 * scripted turn or the simulated user (`userModel`), tools come and go (`tool.added`, `tool.removed`; a call to a
 * removed one is a `tool.unavailable` error), and fake services answer their tools, each call a `service.call` event
 * and each service's final state a `service.state` event (and `RunAgentResult.services`).
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
  /** The simulated user's model's price: when given, its tokens count toward `costUsd` and the cost limit too. */
  userPricing?: { promptPerMillion: number; completionPerMillion: number };
  taskId?: string;
  suite?: string;
  agent?: { name: string; version: string };
  /** Said when the model answers without a tool call (Inspect's continue message). */
  continueMessage?: string;
  /** End the attempt (`no-action`) when the model answers without a tool call, instead of nudging it on. */
  stopOnNoAction?: boolean;
  now?: () => Date;
  /** The task's behavioural case: user turns, a simulated user, changing tools, fake services. */
  behaviour?: TaskBehaviour;
  /**
   * The simulated user's model. Required when the behaviour has a simulated user (its absence ends the attempt as an
   * infrastructure error naming it); never defaulted to `model`, the policy under test.
   */
  userModel?: ModelsPort;
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
  /** The simulated user's model's tokens (only when the task has a simulated user); not in `usage` (the policy's). */
  userUsage?: AgentUsage;
  outputBytes: number;
  /** Dollars: the policy's tokens at `pricing`, plus the simulated user's at `userPricing` when given. */
  costUsd?: number;
  durationMs: number;
  diff?: string;
  trajectory: Trajectory;
  /** Each fake service's state at the end (behavioural cases with services). */
  services?: Partial<Record<ServiceName, unknown>>;
}

/** Characters of a service call's result kept in its `service.call` event. */
export const SERVICE_RESULT_CHARS = 20_000;

interface PendingUserTurn {
  text: string;
  source: 'script' | 'simulated-user' | 'harness';
  detail: Record<string, unknown>;
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
  const behaviour = input.behaviour;
  const services = createServices(behaviour?.services, now);
  const userTurns = new Triggers(behaviour?.userTurns ?? []);
  const simulatedUser = behaviour?.simulatedUser && input.userModel ? new SimulatedUserSession(behaviour.simulatedUser, input.userModel, input.instruction) : undefined;
  const offersAskUser = behaviour !== undefined && (behaviour.userTurns.length > 0 || behaviour.simulatedUser !== undefined);
  const schedule = new ToolSchedule(
    [...(input.tools ?? DEFAULT_TOOLS), ...(behaviour?.tools?.define ?? []).map(customTool), ...services.tools, ...(offersAskUser ? [askUserTool] : [])],
    behaviour?.tools?.changes ?? [],
  );
  const definitions = schedule.definitions();
  const pendingUser: PendingUserTurn[] = [];
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
  const userUsage: AgentUsage | undefined = simulatedUser ? { promptTokens: 0, completionTokens: 0, cachedTokens: 0 } : undefined;
  let turns = 0;
  let outputBytes = 0;
  let costUsd = input.pricing || input.userPricing ? 0 : undefined;
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

  /** An event happened: the tool changes and user turns it fires wait for the end of the turn. */
  const fire = (event: AgentEvent) => {
    schedule.onEvent(event);
    for (const f of userTurns.onEvent(event)) pendingUser.push({ text: f.item.text, source: 'script', detail: { index: f.index, trigger: describeTrigger(f.item) } });
  };
  /** The turn ended: what is due after it fires. */
  const turnEnded = (turn: number) => {
    schedule.afterTurn(turn);
    for (const f of userTurns.afterTurn(turn)) pendingUser.push({ text: f.item.text, source: 'script', detail: { index: f.index, trigger: describeTrigger(f.item) } });
  };
  const askSimulatedUser = async (text: string): Promise<{ text: string; detail: Record<string, unknown> } | undefined> => {
    if (!simulatedUser) return undefined;
    try {
      const r = await simulatedUser.reply(text, AbortSignal.timeout(Math.max(1, deadline - now().getTime())));
      if (r.kind === 'gone') return { text: r.text, detail: { gone: true } };
      // The user's tokens are spent too: kept apart from the policy's, and priced into the cost limit when priced.
      userUsage!.promptTokens += r.usage.promptTokens;
      userUsage!.completionTokens += r.usage.completionTokens;
      userUsage!.cachedTokens += r.usage.cachedTokens ?? 0;
      if (input.userPricing) costUsd = (costUsd ?? 0) + (r.usage.promptTokens * input.userPricing.promptPerMillion + r.usage.completionTokens * input.userPricing.completionPerMillion) / 1e6;
      return { text: r.text, detail: { turn: r.turn, ended: r.ended, model: r.model, usage: r.usage } };
    } catch (error) {
      throw new StopAttempt({
        kind: 'infrastructure-error',
        error: error instanceof FlywheelError ? error.name : InfrastructureErrorNames.infrastructure,
        message: `the simulated user's model failed: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
  };
  /** After a turn: the tool changes that fired take effect, then the user turns that fired are said, in order. */
  const endTurn = (messageId: string): number => {
    const said: PendingUserTurn[] = [];
    for (const applied of schedule.applyPending()) {
      recorder.event({
        kind: applied.change === 'add' ? 'tool.added' : 'tool.removed',
        messageId,
        message: `${applied.tool} ${applied.change === 'add' ? 'added' : 'removed'}`,
        detail: { tool: applied.tool, index: applied.index, trigger: applied.trigger, tools: schedule.active().map((t) => t.name) },
      });
      if (applied.notice !== '') said.push({ text: applied.notice, source: 'harness', detail: { toolChange: applied.index } });
    }
    const turnsSaid = pendingUser.splice(0);
    said.push(...turnsSaid);
    said.forEach((turn, i) => {
      const userMessageId = `${messageId}:u${i + 1}`;
      messages.push({ role: 'user', content: turn.text });
      recorder.message({ messageId: userMessageId, role: 'user', content: turn.text });
      if (turn.source !== 'harness') recorder.event({ kind: 'user.turn', messageId, message: turn.text, detail: { source: turn.source, delivered: 'message', userMessageId, ...turn.detail } });
    });
    return turnsSaid.length;
  };

  let stopReason: StopReason;
  try {
    if (behaviour?.simulatedUser && !input.userModel) {
      throw new StopAttempt({ kind: 'infrastructure-error', error: ErrorNames.configuration, message: 'the task has a simulated user but the attempt was given no user model (RunAgentInput.userModel)' });
    }
    for (;;) {
      checkBudgets();
      if (turns >= input.limits.turns) hit('turns', undefined, { limit: input.limits.turns });
      turns++;
      const messageId = `${input.attemptId}:m${turns}`;
      const callStarted = now();
      let reply: ChatResponse;
      const remaining = Math.max(1, deadline - callStarted.getTime());
      try {
        reply = await input.model.chat({ messages, tools: schedule.definitions(), sampling, signal: AbortSignal.timeout(remaining) });
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
        fire({ kind: 'no-tool-call' });
        turnEnded(turns);
        if (pendingUser.length === 0) {
          const answer = await askSimulatedUser(reply.message.content);
          if (answer && !answer.detail['gone']) pendingUser.push({ text: answer.text, source: 'simulated-user', detail: answer.detail });
        }
        const said = endTurn(messageId);
        if (said > 0) {
          checkBudgets(messageId);
          continue;
        }
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
      turnEnded(turns);
      endTurn(messageId);
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
  const serviceStates = services.states();
  for (const [service, state] of Object.entries(serviceStates)) recorder.event({ kind: 'service.state', message: `${service} at the end`, detail: { service, state } });
  const durationMs = now().getTime() - started.getTime();
  const summary = {
    stopReason,
    turns,
    usage,
    ...(userUsage ? { userUsage } : {}),
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
    ...(Object.keys(serviceStates).length > 0 ? { services: serviceStates } : {}),
  };

  async function runToolCall(call: ToolCall, messageId: string): Promise<{ submitted?: { answer?: string } }> {
    const t0 = now();
    const answer = (content: string, isError: boolean, extra: { truncated?: boolean; exitCode?: number | null } = {}) => {
      outputBytes += Buffer.byteLength(content);
      messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content, isError });
      recorder.toolResult({ messageId, toolCallId: call.id, name: call.name, isError, content, truncated: extra.truncated ?? false, ...(extra.exitCode !== undefined ? { exitCode: extra.exitCode } : {}), durationMs: now().getTime() - t0.getTime() });
    };
    const span = { toolCallId: call.id, field: 'arguments' as const, start: 0, end: call.arguments.length };
    const tool = schedule.get(call.name);
    if (!tool) {
      const available = schedule.active().map((t) => t.name).join(', ');
      if (schedule.wasRemoved(call.name)) {
        const message = `Error: the tool "${call.name}" is no longer available: it was removed during this attempt. Available tools: ${available}.`;
        recorder.event({ kind: 'tool.unavailable', messageId, span, message, detail: { tool: call.name } });
        answer(message, true);
        return {};
      }
      const message = `Error: there is no tool named "${call.name}". Available tools: ${available}.`;
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
    let outcome: ToolOutcome;
    if (tool.name === ASK_USER_TOOL) outcome = await askUser((parsed.data as { question: string }).question, messageId, call.id);
    else outcome = await tool.run(parsed.data, { sandbox: input.sandbox, timeoutMs: Math.min(input.limits.commandSeconds * 1000, timeLeft) });
    if (outcome.submitted) {
      const held = pendingUser.length;
      fire({ kind: 'submit' });
      if (pendingUser.length > held) {
        recorder.event({ kind: 'submit.held', messageId, span, message: 'the submission is held: a user turn answers it', detail: { turns: pendingUser.length - held } });
        outcome = { content: SUBMIT_HELD, isError: false };
      }
    }
    answer(outcome.content, outcome.isError, { ...(outcome.truncated !== undefined ? { truncated: outcome.truncated } : {}), ...(outcome.exitCode !== undefined ? { exitCode: outcome.exitCode } : {}) });
    if (tool.service !== undefined) {
      recorder.event({
        kind: 'service.call',
        messageId,
        span,
        message: `${tool.service}.${tool.name}${outcome.isError ? ' (error)' : ''}`,
        detail: { service: tool.service, tool: tool.name, args: parsed.data, result: outcome.content.slice(0, SERVICE_RESULT_CHARS), isError: outcome.isError, ...(outcome.content.length > SERVICE_RESULT_CHARS ? { resultChars: outcome.content.length } : {}) },
      });
    }
    fire({ kind: 'tool-call', tool: tool.name });
    if (tool.service !== undefined) fire({ kind: 'service-call', tool: tool.name, service: tool.service });
    if (outcome.limit === 'time' && now().getTime() >= deadline) hit('time', messageId, { during: 'tool call' });
    return outcome.submitted ? { submitted: outcome.submitted } : {};
  }

  /** `ask_user`: a scripted turn on `ask-user` answers, else the simulated user, else no one. */
  async function askUser(question: string, messageId: string, toolCallId: string): Promise<ToolOutcome> {
    schedule.onEvent({ kind: 'ask-user' });
    const scripted = userTurns.onEvent({ kind: 'ask-user' });
    const record = (text: string, source: string, detail: Record<string, unknown>) =>
      recorder.event({ kind: 'user.turn', messageId, span: { toolCallId, field: 'arguments', start: 0, end: 0 }, message: text, detail: { source, delivered: 'tool-result', question, ...detail } });
    if (scripted.length > 0) {
      const text = scripted.map((f) => f.item.text).join('\n\n');
      record(text, 'script', { indexes: scripted.map((f) => f.index), trigger: describeTrigger(scripted[0]!.item) });
      return { content: text, isError: false };
    }
    const answer = await askSimulatedUser(question);
    if (answer) {
      record(answer.text, 'simulated-user', answer.detail);
      return { content: answer.text, isError: false };
    }
    recorder.event({ kind: 'user.unanswered', messageId, message: NO_ANSWER, detail: { question } });
    return { content: NO_ANSWER, isError: false };
  }
}
