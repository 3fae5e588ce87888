import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from '../../lib/cli/scripted-model.ts';

/**
 * A real HTTP server speaking OpenAI chat completions (`POST /v1/chat/completions`), embeddings
 * (`POST /v1/embeddings`), the Bedrock Converse wire format (`POST /model/{id}/converse`) and Titan embeddings
 * through Bedrock InvokeModel (`POST /model/{id}/invoke`), driven by a script: a list of steps consumed in order, or
 * a function of the request.
 * Steps can be replies (text, tool calls, token ids, logprobs), HTTP errors (429 with Retry-After, 500) and delays.
 * Every request is recorded.
 */
export interface ScriptedToolCall {
  name: string;
  /** An object is JSON-encoded; a string is sent verbatim (to script malformed JSON). */
  arguments: Record<string, unknown> | string;
  id?: string;
}

export interface ScriptedReply {
  content?: string;
  toolCalls?: ScriptedToolCall[];
  finishReason?: string;
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** vLLM `return_token_ids`: top-level prompt_token_ids and choices[0].token_ids. */
  promptTokenIds?: number[];
  completionTokenIds?: number[];
  /** choices[0].logprobs.content[].logprob */
  logprobs?: number[];
  model?: string;
  /** Wait this long before answering. */
  delayMs?: number;
}

export interface ScriptedError {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  delayMs?: number;
}

export type ScriptStep = ({ reply: ScriptedReply } | { error: ScriptedError });

export interface RecordedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  at: number;
}

export type Script = ScriptStep[] | ((request: RecordedRequest, index: number) => ScriptStep);

export interface ScriptedModelServer {
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  requests: RecordedRequest[];
  chatRequests(): RecordedRequest[];
  close(): Promise<void>;
}

export const reply = {
  text: (content: string, extra: Partial<ScriptedReply> = {}): ScriptStep => ({ reply: { content, ...extra } }),
  tool: (name: string, args: Record<string, unknown> | string, extra: Partial<ScriptedReply> = {}): ScriptStep => ({
    reply: { toolCalls: [{ name, arguments: args }], ...extra },
  }),
  tools: (calls: ScriptedToolCall[], extra: Partial<ScriptedReply> = {}): ScriptStep => ({ reply: { toolCalls: calls, ...extra } }),
  error: (status: number, headers: Record<string, string> = {}, body: unknown = { error: { message: `scripted ${status}` } }): ScriptStep => ({
    error: { status, headers, body },
  }),
};

/** A deterministic embedding: character-trigram hashes folded into 8 dimensions. */
function embedText(text: string): number[] {
  const v = Array.from({ length: 8 }, () => 0);
  for (let i = 0; i < text.length; i++) v[(text.charCodeAt(i) * 31 + i) % 8]! += 1;
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

export interface ScriptedModelServerOptions {
  /** Replaces the default 8-dimension embedding of `/v1/embeddings` (e.g. a bag-of-words hash for clustering tests). */
  embed?: (text: string) => number[];
}

export async function startScriptedModelServer(script: Script, options: ScriptedModelServerOptions = {}): Promise<ScriptedModelServer> {
  const embed = options.embed ?? embedText;
  const requests: RecordedRequest[] = [];
  let chatIndex = 0;
  const server: Server = createServer(async (req, res) => {
    const text = await readBody(req);
    let body: Record<string, unknown>;
    try {
      body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'invalid JSON' } }));
      return;
    }
    const recorded: RecordedRequest = { path: req.url ?? '', headers: req.headers, body, at: Date.now() };
    requests.push(recorded);
    if (req.method === 'POST' && req.url === '/v1/embeddings') {
      const input = Array.isArray(body['input']) ? (body['input'] as string[]) : [String(body['input'])];
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({ object: 'list', model: body['model'], data: input.map((t, index) => ({ object: 'embedding', index, embedding: embed(t) })), usage: { prompt_tokens: input.join(' ').length } }),
      );
      return;
    }
    const invoke = req.method === 'POST' && /^\/model\/[^/]+\/invoke$/.test(req.url ?? '');
    if (invoke && typeof body['inputText'] === 'string') {
      // Amazon Titan text embeddings through Bedrock InvokeModel: `{ inputText }` in, `{ embedding, inputTextTokenCount }` out.
      const inputText = body['inputText'];
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({ embedding: embed(inputText), inputTextTokenCount: inputText.split(/\s+/).filter(Boolean).length }),
      );
      return;
    }
    const converse = req.method === 'POST' && /^\/model\/[^/]+\/converse$/.test(req.url ?? '');
    if (!converse && (req.method !== 'POST' || req.url !== '/v1/chat/completions')) {
      res.writeHead(404).end();
      return;
    }
    const index = chatIndex++;
    const step = typeof script === 'function' ? script(recorded, index) : script[index];
    if (!step) {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `script exhausted at request ${index}` } }));
      return;
    }
    const delay = 'reply' in step ? step.reply.delayMs : step.error.delayMs;
    if (delay) await new Promise((r) => setTimeout(r, delay));
    if (res.destroyed || req.socket.destroyed) return;
    if ('error' in step) {
      const awsType = step.error.status === 429 ? 'ThrottlingException' : step.error.status >= 500 ? 'InternalServerException' : 'ValidationException';
      const headers = converse ? { 'x-amzn-errortype': awsType, ...step.error.headers } : step.error.headers;
      res.writeHead(step.error.status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(converse ? { message: `scripted ${step.error.status}` } : (step.error.body ?? {})));
      return;
    }
    const r = step.reply;
    if (converse) {
      // Amazon Bedrock Converse wire shape (the SDK speaks restJson1 to POST /model/{modelId}/converse).
      const content: unknown[] = [];
      if (r.content) content.push({ text: r.content });
      (r.toolCalls ?? []).forEach((c, i) =>
        content.push({ toolUse: { toolUseId: c.id ?? `tooluse_${index}_${i}`, name: c.name, input: typeof c.arguments === 'string' ? JSON.parse(c.arguments) : c.arguments } }),
      );
      const u = r.usage ?? { prompt_tokens: 10, completion_tokens: 5 };
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          output: { message: { role: 'assistant', content } },
          stopReason: r.finishReason ?? ((r.toolCalls ?? []).length > 0 ? 'tool_use' : 'end_turn'),
          usage: { inputTokens: u.prompt_tokens, outputTokens: u.completion_tokens, totalTokens: u.prompt_tokens + u.completion_tokens },
          metrics: { latencyMs: 1 },
        }),
      );
      return;
    }
    const toolCalls = (r.toolCalls ?? []).map((c, i) => ({
      id: c.id ?? `call_${index}_${i}`,
      type: 'function',
      function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
    }));
    const completionIds = r.completionTokenIds;
    const choice: Record<string, unknown> = {
      index: 0,
      message: { role: 'assistant', content: r.content ?? null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
      finish_reason: r.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
      ...(body['return_token_ids'] && completionIds ? { token_ids: completionIds } : {}),
      ...(body['logprobs'] && r.logprobs ? { logprobs: { content: r.logprobs.map((lp, i) => ({ token: `t${completionIds?.[i] ?? i}`, logprob: lp, bytes: null, top_logprobs: [] })) } } : {}),
    };
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: `chatcmpl-${index}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: r.model ?? body['model'] ?? 'scripted',
        choices: [choice],
        usage: r.usage ?? { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        ...(body['return_token_ids'] && r.promptTokenIds ? { prompt_token_ids: r.promptTokenIds } : {}),
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    chatRequests: () => requests.filter((r) => r.path === '/v1/chat/completions' || r.path.endsWith('/converse')),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
