import type {
  ChatMessage,
  ChatRequest,
  ChatResponse,
  EmbedResponse,
  FinishReason,
  ModelsPort,
  TokenRecord,
  ToolCall,
} from '../ports/models.ts';
import { ModelRequestError, ModelUnavailableError } from './model-errors.ts';
import { DEFAULT_RETRY, backoffDelayMs, sleep, type RetryPolicy } from './retry.ts';

/**
 * OpenAI-compatible chat completions (`POST {baseUrl}/chat/completions`) with tool calling, for vLLM, SGLang,
 * Ollama and hosted APIs.
 *
 * Token ids: with `vllmExtensions` on (the default), requests carry `logprobs: true` (standard OpenAI) and vLLM's
 * `return_token_ids: true`, which makes vLLM answer with top-level `prompt_token_ids` and `choices[0].token_ids` —
 * the exact ids it sampled, so training never re-tokenises text. Servers that do not know the extension ignore it
 * (vLLM, SGLang and most proxies accept extra fields); turn it off for strict hosted APIs.
 * With `return_tokens_as_token_ids` (opt-in) each logprob entry's `token` reads `token_id:<id>`, which older vLLM
 * versions (before `return_token_ids`) can use instead; the driver parses both.
 *
 * @example
 * const model = openAiCompatibleModel({ baseUrl: 'http://127.0.0.1:8000/v1', model: 'qwen3-coder' });
 * const reply = await model.chat({ messages: [{ role: 'user', content: 'fix the bug' }], tools });
 */
export interface OpenAiCompatibleOptions {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:8000/v1`. */
  baseUrl: string;
  model: string;
  apiKey?: string;
  embeddingModel?: string;
  /** Per-request timeout; a timed-out request is retried like a 5xx. Default 120 s. */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Send vLLM's `return_token_ids` (default true). */
  vllmExtensions?: boolean;
  /** Send vLLM's `return_tokens_as_token_ids` too (default false). */
  tokensAsTokenIds?: boolean;
  /** Extra body fields merged into each chat request (e.g. `chat_template_kwargs`). */
  extraBody?: Record<string, unknown>;
  /** Keep the raw response on ChatResponse.raw (default false). */
  keepRaw?: boolean;
  fetch?: typeof fetch;
  /** Injected for tests: the random source of the jitter. */
  random?: () => number;
}

interface OpenAiToolCall {
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string | Record<string, unknown> };
}

interface OpenAiChoice {
  message?: { content?: string | null; tool_calls?: OpenAiToolCall[]; reasoning_content?: string | null; reasoning?: string | null };
  finish_reason?: string | null;
  token_ids?: number[] | null;
  logprobs?: { content?: Array<{ token: string; logprob: number }> | null } | null;
}

interface OpenAiChatBody {
  id?: string;
  model?: string;
  choices?: OpenAiChoice[];
  usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } | null };
  prompt_token_ids?: number[] | null;
}

export function openAiCompatibleModel(options: OpenAiCompatibleOptions): ModelsPort {
  const policy: RetryPolicy = { ...DEFAULT_RETRY, ...options.retry };
  const doFetch = options.fetch ?? fetch;
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 120_000;
  const random = options.random ?? Math.random;

  async function post(path: string, body: unknown, signal?: AbortSignal): Promise<{ json: unknown; attempts: number; rateLimited: number }> {
    let lastStatus: number | undefined;
    let rateLimited = 0;
    let lastError: unknown;
    for (let attempt = 1; attempt <= policy.maxAttempts; attempt++) {
      let retryAfter: string | null = null;
      try {
        const timeout = AbortSignal.timeout(timeoutMs);
        const response = await doFetch(`${baseUrl}${path}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
          },
          body: JSON.stringify(body),
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        });
        const text = await response.text();
        if (response.ok) {
          try {
            return { json: JSON.parse(text), attempts: attempt, rateLimited };
          } catch (cause) {
            throw new ModelUnavailableError(`model endpoint ${baseUrl}${path} answered invalid JSON`, attempt, response.status, { cause });
          }
        }
        lastStatus = response.status;
        if (response.status === 429) rateLimited++;
        lastError = new Error(`HTTP ${response.status}: ${text.slice(0, 500)}`);
        if (response.status !== 429 && response.status !== 408 && response.status < 500) {
          throw new ModelRequestError(`model endpoint ${baseUrl}${path} rejected the request: HTTP ${response.status}: ${text.slice(0, 500)}`, response.status);
        }
        retryAfter = response.headers.get('retry-after-ms') !== null
          ? String(Number(response.headers.get('retry-after-ms')) / 1000)
          : response.headers.get('retry-after');
      } catch (error) {
        if (error instanceof ModelRequestError || error instanceof ModelUnavailableError) throw error;
        if (signal?.aborted) throw signal.reason;
        lastError = error;
      }
      if (attempt < policy.maxAttempts) await sleep(backoffDelayMs(policy, attempt - 1, retryAfter, random), signal);
    }
    const why = lastError instanceof Error ? lastError.message : String(lastError);
    throw new ModelUnavailableError(
      `model endpoint ${baseUrl}${path} unavailable after ${policy.maxAttempts} attempts (last: ${why})`,
      policy.maxAttempts,
      lastStatus,
      { cause: lastError },
    );
  }

  return {
    id: `openai:${options.model}@${baseUrl}`,

    async chat(request: ChatRequest): Promise<ChatResponse> {
      const wantTokens = request.returnTokens ?? true;
      const s = request.sampling ?? {};
      const body: Record<string, unknown> = {
        model: options.model,
        messages: request.messages.map(toOpenAiMessage),
        ...(request.tools && request.tools.length > 0
          ? { tools: request.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } })), tool_choice: 'auto' }
          : {}),
        ...(s.temperature !== undefined ? { temperature: s.temperature } : {}),
        ...(s.topP !== undefined ? { top_p: s.topP } : {}),
        ...(s.topK !== undefined ? { top_k: s.topK } : {}),
        ...(s.maxTokens !== undefined ? { max_tokens: s.maxTokens } : {}),
        ...(s.seed !== undefined ? { seed: s.seed } : {}),
        ...(s.stop !== undefined ? { stop: s.stop } : {}),
        ...(wantTokens ? { logprobs: true } : {}),
        ...(wantTokens && (options.vllmExtensions ?? true) ? { return_token_ids: true } : {}),
        ...(wantTokens && options.tokensAsTokenIds ? { return_tokens_as_token_ids: true } : {}),
        ...options.extraBody,
      };
      const { json, attempts, rateLimited } = await post('/chat/completions', body, request.signal);
      return { ...fromOpenAiResponse(json as OpenAiChatBody, attempts, options.model, options.keepRaw ?? false), rateLimited };
    },

    async embed(texts: string[]): Promise<EmbedResponse> {
      const model = options.embeddingModel ?? options.model;
      const { json } = await post('/embeddings', { model, input: texts });
      const body = json as { data?: Array<{ index?: number; embedding: number[] }>; model?: string; usage?: { prompt_tokens?: number } };
      const data = [...(body.data ?? [])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
      return {
        vectors: data.map((d) => d.embedding),
        model: body.model ?? model,
        ...(body.usage?.prompt_tokens !== undefined ? { usage: { promptTokens: body.usage.prompt_tokens } } : {}),
      };
    },
  };
}

function toOpenAiMessage(message: ChatMessage): Record<string, unknown> {
  switch (message.role) {
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content,
        ...(message.toolCalls && message.toolCalls.length > 0
          ? { tool_calls: message.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) }
          : {}),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
    default:
      return { role: message.role, content: message.content };
  }
}

const FINISH: Record<string, FinishReason> = { stop: 'stop', tool_calls: 'tool_calls', function_call: 'tool_calls', length: 'length', content_filter: 'content_filter' };

function fromOpenAiResponse(body: OpenAiChatBody, attempts: number, fallbackModel: string, keepRaw: boolean): ChatResponse {
  const choice = body.choices?.[0];
  if (!choice?.message) throw new ModelUnavailableError('model endpoint answered without choices[0].message', attempts);
  const toolCalls: ToolCall[] = (choice.message.tool_calls ?? []).map((c, i) => ({
    id: c.id ?? `call_${i}`,
    name: c.function?.name ?? '',
    arguments: typeof c.function?.arguments === 'string' ? c.function.arguments : JSON.stringify(c.function?.arguments ?? {}),
  }));
  const tokens: TokenRecord = {};
  if (Array.isArray(body.prompt_token_ids)) tokens.promptTokenIds = body.prompt_token_ids;
  if (Array.isArray(choice.token_ids)) tokens.completionTokenIds = choice.token_ids;
  const content = choice.logprobs?.content;
  if (Array.isArray(content)) {
    tokens.logprobs = content.map((t) => t.logprob);
    if (!tokens.completionTokenIds && content.every((t) => /^token_id:\d+$/.test(t.token))) {
      tokens.completionTokenIds = content.map((t) => Number(t.token.slice('token_id:'.length)));
    }
  }
  const raw = choice.finish_reason ?? undefined;
  const reasoning = choice.message.reasoning_content ?? choice.message.reasoning ?? undefined;
  return {
    message: { role: 'assistant', content: choice.message.content ?? '', toolCalls, ...(reasoning ? { reasoning } : {}) },
    finishReason: raw === undefined ? 'other' : (FINISH[raw] ?? 'other'),
    ...(raw !== undefined ? { rawFinishReason: raw } : {}),
    usage: {
      promptTokens: body.usage?.prompt_tokens ?? 0,
      completionTokens: body.usage?.completion_tokens ?? 0,
      ...(body.usage?.prompt_tokens_details?.cached_tokens !== undefined ? { cachedTokens: body.usage.prompt_tokens_details.cached_tokens } : {}),
    },
    ...(Object.keys(tokens).length > 0 ? { tokens } : {}),
    model: body.model ?? fallbackModel,
    ...(body.id ? { responseId: body.id } : {}),
    attempts,
    ...(keepRaw ? { raw: body } : {}),
  };
}
