/**
 * One judge's conversation with its model, metered: each answer comes through one tool call with the judge's
 * decoding parameters; calls, tokens and dollars are counted against a budget; a refused answer goes back to the
 * model with the reason (as the tool's error, or a user turn when it answered without the tool). The rubric judge
 * and the pairwise judge both talk through it, so they spend and retry by the same rules.
 *
 * @example
 * const talk = new JudgeConversation(model, definition, messages, tool, { budget: { maxCalls: 3 } });
 * for (let attempt = 1; attempt <= 3 && !talk.spent(); attempt++) {
 *   const answer = await talk.ask();            // the tool call's arguments (or the content)
 *   const problem = check(answer.raw);
 *   if (!problem) break;
 *   talk.refuse(answer, `Your answer was refused: ${problem}.`);
 * }
 * talk.meter(); // { calls, usage, costUsd? }
 */
import type { z } from 'zod';
import type { ChatMessage, ModelsPort, ToolCall, ToolDefinition } from '../ports/models.ts';
import type { JudgeDefinition } from './judge-identity.ts';

/** What one judging may spend; when spent, whatever is still open is voided. */
export interface JudgeBudget {
  /** Model calls (retries included); default `maxAttempts`. */
  maxCalls?: number;
  /** Prompt + completion tokens over the calls. */
  maxTokens?: number;
  /** Dollars, counted only when `pricing` is given. */
  maxCostUsd?: number;
}

/** A model's price per million prompt and completion tokens. */
export interface TokenPricing {
  promptPerMillion: number;
  completionPerMillion: number;
}

export interface JudgeConversationOptions {
  budget?: JudgeBudget;
  /** Answers the caller asks for at most (the first included): the call budget's default. */
  maxAttempts: number;
  pricing?: TokenPricing;
  signal?: AbortSignal;
}

export interface JudgeAnswer {
  /** The tool call's arguments, else the message's content: what the judge's parser reads. */
  raw: string;
  content: string;
  call?: ToolCall;
}

export class JudgeConversation {
  readonly #model: ModelsPort;
  readonly #definition: JudgeDefinition;
  readonly #messages: ChatMessage[];
  readonly #tool: ToolDefinition;
  readonly #options: JudgeConversationOptions;
  readonly #maxCalls: number;
  #calls = 0;
  readonly #usage = { promptTokens: 0, completionTokens: 0 };
  #costUsd: number | undefined;

  constructor(model: ModelsPort, definition: JudgeDefinition, messages: ChatMessage[], tool: ToolDefinition, options: JudgeConversationOptions) {
    this.#model = model;
    this.#definition = definition;
    this.#messages = messages;
    this.#tool = tool;
    this.#options = options;
    this.#maxCalls = Math.max(0, Math.floor(options.budget?.maxCalls ?? Math.max(1, Math.floor(options.maxAttempts))));
    this.#costUsd = options.pricing ? 0 : undefined;
  }

  /** Why the budget allows no further answer (`budget spent: …`), or undefined. */
  spent(): string | undefined {
    const budget = this.#options.budget;
    const tokens = this.#usage.promptTokens + this.#usage.completionTokens;
    if (this.#calls >= this.#maxCalls) return `budget spent: ${this.#calls} of ${this.#maxCalls} model call(s) made`;
    if (budget?.maxTokens !== undefined && tokens >= budget.maxTokens) return `budget spent: ${tokens} tokens used of ${budget.maxTokens}`;
    if (budget?.maxCostUsd !== undefined && this.#costUsd !== undefined && this.#costUsd >= budget.maxCostUsd) {
      return `budget spent: $${this.#costUsd.toFixed(4)} spent of $${budget.maxCostUsd}`;
    }
    return undefined;
  }

  /** Asks for one answer; throws what the models port throws (an endpoint down is not a verdict). */
  async ask(): Promise<JudgeAnswer> {
    const d = this.#definition.decoding;
    const reply = await this.#model.chat({
      messages: this.#messages,
      tools: [this.#tool],
      sampling: {
        temperature: d.temperature,
        ...(d.topP !== undefined ? { topP: d.topP } : {}),
        ...(d.maxTokens !== undefined ? { maxTokens: d.maxTokens } : {}),
        ...(d.seed !== undefined ? { seed: d.seed } : {}),
      },
      returnTokens: false,
      ...(this.#options.signal ? { signal: this.#options.signal } : {}),
    });
    this.#calls++;
    this.#usage.promptTokens += reply.usage.promptTokens;
    this.#usage.completionTokens += reply.usage.completionTokens;
    const pricing = this.#options.pricing;
    if (pricing && this.#costUsd !== undefined) {
      this.#costUsd += (reply.usage.promptTokens * pricing.promptPerMillion + reply.usage.completionTokens * pricing.completionPerMillion) / 1e6;
    }
    const call = reply.message.toolCalls.find((c) => c.name === this.#tool.name) ?? reply.message.toolCalls[0];
    return { raw: call ? call.arguments : reply.message.content, content: reply.message.content, ...(call ? { call } : {}) };
  }

  /** Sends the answer back refused, with the correction the model should act on. */
  refuse(answer: JudgeAnswer, correction: string): void {
    const { call } = answer;
    this.#messages.push({ role: 'assistant', content: answer.content, ...(call ? { toolCalls: [call] } : {}) });
    this.#messages.push(call ? { role: 'tool', toolCallId: call.id, name: call.name, content: correction, isError: true } : { role: 'user', content: correction });
  }

  /** What the conversation cost so far. */
  meter(): { calls: number; usage: { promptTokens: number; completionTokens: number }; costUsd?: number } {
    return { calls: this.#calls, usage: { ...this.#usage }, ...(this.#costUsd !== undefined ? { costUsd: this.#costUsd } : {}) };
  }
}

/**
 * Parses a judge's answer (a tool call's arguments, or its content) with the answer's schema: the answer, or why it is
 * refused in words the model can act on (no answer, not JSON, each offending field).
 *
 * @example
 * const parsed = parseJudgeAnswer(answer.raw, AnswerSchema, RUBRIC_TOOL);
 * if (!parsed.ok) talk.refuse(answer, `Your answer was refused: ${parsed.message}.`);
 */
export function parseJudgeAnswer<S extends z.ZodType>(raw: string, schema: S, toolName: string): { ok: true; answer: z.output<S> } | { ok: false; message: string } {
  if (raw.trim() === '') return { ok: false, message: `no ${toolName} call and no content` };
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (e) {
    return { ok: false, message: `arguments are not JSON (${(e as Error).message})` };
  }
  const r = schema.safeParse(json);
  if (!r.success) return { ok: false, message: r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ') };
  return { ok: true, answer: r.data };
}
