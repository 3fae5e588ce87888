/**
 * Models port: chat with tools, and embeddings.
 *
 * Drivers: OpenAI-compatible HTTP (`lib/models/openai-compatible.ts`: vLLM, SGLang, Ollama, hosted APIs) and
 * Amazon Bedrock Converse (`lib/drivers/aws/bedrock-converse.ts`). Both pass `test/contract/models.contract.ts`, run
 * against a real scripted HTTP server that speaks each driver's wire format (`test/support/scripted-model-server.ts`)
 * rather than an in-process fake.
 *
 * A driver retries what a retry may fix (429, 5xx, network errors, timeouts) and throws
 * `ModelUnavailableError` (`Flywheel.ModelUnavailable`) when the endpoint stays down: that is an infrastructure
 * error, never the model failing. A request the endpoint rejects for good (400, 401, 404) throws
 * `ModelRequestError` (`Flywheel.ModelRequestError`).
 *
 * @example
 * const reply = await model.chat({ messages: [{ role: 'user', content: 'hi' }], tools, sampling: { temperature: 0 } });
 * for (const call of reply.message.toolCalls) console.log(call.name, call.arguments);
 */

export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';

export interface ToolCall {
  /** The provider's id of this call; tool results answer it. */
  id: string;
  name: string;
  /** The arguments exactly as the model wrote them (a JSON string, possibly malformed). */
  arguments: string;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; name?: string; content: string; isError?: boolean };

export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema (draft 2020-12 subset) of the arguments object. */
  parameters: Record<string, unknown>;
}

export interface SamplingParams {
  temperature?: number;
  topP?: number;
  topK?: number;
  maxTokens?: number;
  seed?: number;
  stop?: string[];
}

export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'other';

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens?: number;
}

/** Exactly what the server sampled, when it says so (vLLM `return_token_ids` + `logprobs`). */
export interface TokenRecord {
  promptTokenIds?: number[];
  completionTokenIds?: number[];
  /** One log-probability per completion token, aligned with completionTokenIds. */
  logprobs?: number[];
}

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  sampling?: SamplingParams;
  /** Ask for token ids and log-probs (drivers that cannot, ignore it). Default true for OpenAI-compatible. */
  returnTokens?: boolean;
  signal?: AbortSignal;
}

export interface ChatResponse {
  message: { role: 'assistant'; content: string; toolCalls: ToolCall[]; reasoning?: string };
  finishReason: FinishReason;
  /** The provider's own finish/stop reason, verbatim. */
  rawFinishReason?: string;
  usage: Usage;
  tokens?: TokenRecord;
  /** The model name the server reports. */
  model: string;
  /** The provider's response id, if any. */
  responseId?: string;
  /** How many HTTP attempts this call took (1 when the first succeeded). */
  attempts: number;
  /** How many of the failed attempts were rate limits (429 / throttling): what adaptive concurrency backs off on. */
  rateLimited?: number;
  raw?: unknown;
}

export interface EmbedResponse {
  vectors: number[][];
  model: string;
  usage?: { promptTokens: number };
}

export interface ModelsPort {
  /** A label for the trajectory (`openai:<model>@<baseUrl>`, `bedrock:<modelId>`). */
  readonly id: string;
  chat(request: ChatRequest): Promise<ChatResponse>;
  embed(texts: string[]): Promise<EmbedResponse>;
}
