import {
  BedrockRuntimeClient,
  ConverseCommand,
  InvokeModelCommand,
  type ContentBlock,
  type Message,
  type SystemContentBlock,
  type Tool,
} from '@aws-sdk/client-bedrock-runtime';
import type { ChatMessage, ChatRequest, ChatResponse, EmbedResponse, FinishReason, ModelsPort, ToolCall } from '../../ports/models.ts';
import { ModelRequestError, ModelUnavailableError } from '../../models/model-errors.ts';

/**
 * Amazon Bedrock Converse API driver: one message format for every Bedrock chat model, tool use included.
 * The SDK retries throttling and 5xx itself (adaptive mode); what is left after that is `Flywheel.ModelUnavailable`.
 * Bedrock returns no token ids or log-probs, so `tokens` stays empty.
 *
 * Mapping: system messages → `system`; tool results → a `user` message of `toolResult` blocks (consecutive ones
 * merged, as Converse wants strictly alternating roles); assistant tool calls → `toolUse` blocks.
 *
 * @example
 * const model = bedrockConverseModel({ modelId: 'anthropic.claude-sonnet-4-5-v1:0', region: 'us-east-1' });
 */
export interface BedrockConverseOptions {
  modelId: string;
  region?: string;
  /** Titan/Cohere embedding model for `embed`, e.g. `amazon.titan-embed-text-v2:0`. */
  embeddingModelId?: string;
  maxAttempts?: number;
  client?: BedrockRuntimeClient;
}

export function bedrockConverseModel(options: BedrockConverseOptions): ModelsPort {
  const client =
    options.client ??
    new BedrockRuntimeClient({ ...(options.region ? { region: options.region } : {}), maxAttempts: options.maxAttempts ?? 6, retryMode: 'adaptive' });

  return {
    id: `bedrock:${options.modelId}`,

    async chat(request: ChatRequest): Promise<ChatResponse> {
      const { system, messages } = toConverseMessages(request.messages);
      const s = request.sampling ?? {};
      const tools: Tool[] = (request.tools ?? []).map((t) => ({
        toolSpec: { name: t.name, description: t.description, inputSchema: { json: t.parameters as never } },
      }));
      try {
        const out = await client.send(
          new ConverseCommand({
            modelId: options.modelId,
            messages,
            ...(system.length > 0 ? { system } : {}),
            inferenceConfig: {
              ...(s.maxTokens !== undefined ? { maxTokens: s.maxTokens } : {}),
              ...(s.temperature !== undefined ? { temperature: s.temperature } : {}),
              ...(s.topP !== undefined ? { topP: s.topP } : {}),
              ...(s.stop !== undefined ? { stopSequences: s.stop } : {}),
            },
            ...(tools.length > 0 ? { toolConfig: { tools } } : {}),
          }),
          request.signal ? { abortSignal: request.signal } : {},
        );
        const blocks = out.output?.message?.content ?? [];
        const text = blocks.flatMap((b) => (b.text !== undefined ? [b.text] : [])).join('');
        const reasoning = blocks.flatMap((b) => (b.reasoningContent?.reasoningText?.text ? [b.reasoningContent.reasoningText.text] : [])).join('');
        const toolCalls: ToolCall[] = blocks.flatMap((b) =>
          b.toolUse ? [{ id: b.toolUse.toolUseId ?? '', name: b.toolUse.name ?? '', arguments: JSON.stringify(b.toolUse.input ?? {}) }] : [],
        );
        const raw = out.stopReason;
        return {
          message: { role: 'assistant', content: text, toolCalls, ...(reasoning ? { reasoning } : {}) },
          finishReason: mapStop(raw),
          ...(raw ? { rawFinishReason: raw } : {}),
          usage: {
            promptTokens: out.usage?.inputTokens ?? 0,
            completionTokens: out.usage?.outputTokens ?? 0,
            ...(out.usage?.cacheReadInputTokens !== undefined ? { cachedTokens: out.usage.cacheReadInputTokens } : {}),
          },
          model: options.modelId,
          ...(out.$metadata.requestId ? { responseId: out.$metadata.requestId } : {}),
          attempts: out.$metadata.attempts ?? 1,
        };
      } catch (error) {
        throw classify(error, options.modelId);
      }
    },

    async embed(texts: string[]): Promise<EmbedResponse> {
      const modelId = options.embeddingModelId ?? 'amazon.titan-embed-text-v2:0';
      const vectors: number[][] = [];
      let promptTokens = 0;
      try {
        for (const inputText of texts) {
          const out = await client.send(
            new InvokeModelCommand({ modelId, contentType: 'application/json', accept: 'application/json', body: JSON.stringify({ inputText }) }),
          );
          const body = JSON.parse(new TextDecoder().decode(out.body)) as { embedding: number[]; inputTextTokenCount?: number };
          vectors.push(body.embedding);
          promptTokens += body.inputTextTokenCount ?? 0;
        }
      } catch (error) {
        throw classify(error, modelId);
      }
      return { vectors, model: modelId, usage: { promptTokens } };
    },
  };
}

/** Converse wants alternating user/assistant turns; consecutive same-role messages are merged into one. */
export function toConverseMessages(input: ChatMessage[]): { system: SystemContentBlock[]; messages: Message[] } {
  const system: SystemContentBlock[] = [];
  const messages: Message[] = [];
  const push = (role: 'user' | 'assistant', content: ContentBlock[]) => {
    const last = messages.at(-1);
    if (last && last.role === role) last.content = [...(last.content ?? []), ...content];
    else messages.push({ role, content });
  };
  for (const m of input) {
    switch (m.role) {
      case 'system':
        system.push({ text: m.content });
        break;
      case 'user':
        push('user', [{ text: m.content }]);
        break;
      case 'assistant': {
        const blocks: ContentBlock[] = m.content ? [{ text: m.content }] : [];
        for (const call of m.toolCalls ?? []) {
          let parsed: unknown;
          try {
            parsed = JSON.parse(call.arguments);
          } catch {
            parsed = { _unparsed: call.arguments };
          }
          blocks.push({ toolUse: { toolUseId: call.id, name: call.name, input: parsed as never } });
        }
        push('assistant', blocks.length > 0 ? blocks : [{ text: ' ' }]);
        break;
      }
      case 'tool':
        push('user', [{ toolResult: { toolUseId: m.toolCallId, content: [{ text: m.content }], status: m.isError ? 'error' : 'success' } }]);
        break;
    }
  }
  return { system, messages };
}

function mapStop(reason: string | undefined): FinishReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'tool_use':
      return 'tool_calls';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'content_filter';
    default:
      return 'other';
  }
}

function classify(error: unknown, modelId: string): Error {
  const e = error as { name?: string; message?: string; $metadata?: { httpStatusCode?: number; attempts?: number } };
  const status = e.$metadata?.httpStatusCode;
  const permanent = ['ValidationException', 'AccessDeniedException', 'ResourceNotFoundException'].includes(e.name ?? '');
  if (permanent) return new ModelRequestError(`bedrock ${modelId}: ${e.name}: ${e.message}`, status);
  return new ModelUnavailableError(`bedrock ${modelId} unavailable: ${e.name ?? 'Error'}: ${e.message ?? String(error)}`, e.$metadata?.attempts ?? 1, status, { cause: error });
}
