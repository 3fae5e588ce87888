import { afterEach, describe, expect, it } from 'vitest';
import { runAgent } from '../../../lib/harness/agent/run-agent.ts';
import { LimitsSchema } from '../../../lib/harness/task/task-schema.ts';
import type { SandboxSession } from '../../../lib/harness/sandbox/sandbox.ts';
import { ModelRequestError, ModelUnavailableError } from '../../../lib/models/model-errors.ts';
import { openAiCompatibleModel } from '../../../lib/models/openai-compatible.ts';
import { backoffDelayMs, parseRetryAfter, DEFAULT_RETRY } from '../../../lib/models/retry.ts';
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { bedrockConverseModel, toConverseMessages } from '../../../lib/drivers/aws/bedrock-converse.ts';
import { openPlainDirSandbox } from '../../support/plain-dir-sandbox.ts';
import { reply, startScriptedModelServer, type ScriptedModelServer } from '../../support/scripted-model-server.ts';

let server: ScriptedModelServer | undefined;
let sandbox: SandboxSession | undefined;
afterEach(async () => {
  await server?.close();
  await sandbox?.close();
  server = undefined;
  sandbox = undefined;
});

describe('OpenAI-compatible driver against a real scripted server', () => {
  it('429 with Retry-After, then success: waits as told and records the attempts', async () => {
    server = await startScriptedModelServer([reply.error(429, { 'retry-after': '1' }), reply.text('hello')]);
    const model = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'm', retry: { baseDelayMs: 1 } });
    const answer = await model.chat({ messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.message.content).toBe('hello');
    expect(answer.attempts).toBe(2);
    const [first, second] = server.chatRequests();
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(950);
  });

  it('500s forever: Flywheel.ModelUnavailable after the configured attempts', async () => {
    server = await startScriptedModelServer(() => reply.error(500));
    const model = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'm', retry: { baseDelayMs: 5, maxAttempts: 4 } });
    const error = await model.chat({ messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect((error as ModelUnavailableError).name).toBe('Flywheel.ModelUnavailable');
    expect((error as ModelUnavailableError).lastStatus).toBe(500);
    expect(server.chatRequests()).toHaveLength(4);
  });

  it('a network error (nothing listening) and a timeout are retried, then reported unavailable', async () => {
    server = await startScriptedModelServer(() => ({ reply: { content: 'late', delayMs: 2000 } }));
    const slow = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'm', timeoutMs: 100, retry: { baseDelayMs: 1, maxAttempts: 2 } });
    await expect(slow.chat({ messages: [{ role: 'user', content: 'hi' }] })).rejects.toThrow(/unavailable after 2 attempts/);
    expect(server.chatRequests()).toHaveLength(2);
    const url = server.baseUrl;
    await server.close();
    server = undefined;
    const down = openAiCompatibleModel({ baseUrl: url, model: 'm', retry: { baseDelayMs: 1, maxAttempts: 2 } });
    await expect(down.chat({ messages: [{ role: 'user', content: 'hi' }] })).rejects.toBeInstanceOf(ModelUnavailableError);
  });

  it('400 is not retried: Flywheel.ModelRequestError', async () => {
    server = await startScriptedModelServer(() => reply.error(400, {}, { error: { message: 'context too long' } }));
    const model = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'm', retry: { baseDelayMs: 1 } });
    await expect(model.chat({ messages: [{ role: 'user', content: 'hi' }] })).rejects.toBeInstanceOf(ModelRequestError);
    expect(server.chatRequests()).toHaveLength(1);
  });

  it('asks for logprobs and vLLM token ids, and returns them', async () => {
    server = await startScriptedModelServer([
      reply.text('ok', { promptTokenIds: [1, 2, 3], completionTokenIds: [42, 7], logprobs: [-0.1, -2.5], usage: { prompt_tokens: 3, completion_tokens: 2 } }),
    ]);
    const model = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'm', apiKey: 'sk-test' });
    const answer = await model.chat({ messages: [{ role: 'user', content: 'hi' }], sampling: { temperature: 0.7, topP: 0.9, maxTokens: 64, seed: 3 } });
    const body = server.chatRequests()[0]!.body;
    expect(body).toMatchObject({ logprobs: true, return_token_ids: true, temperature: 0.7, top_p: 0.9, max_tokens: 64, seed: 3 });
    expect(server.chatRequests()[0]!.headers['authorization']).toBe('Bearer sk-test');
    expect(answer.tokens).toEqual({ promptTokenIds: [1, 2, 3], completionTokenIds: [42, 7], logprobs: [-0.1, -2.5] });
  });

  it('reads `token_id:<id>` logprob tokens (return_tokens_as_token_ids) when token_ids are absent', async () => {
    server = await startScriptedModelServer(() => ({ reply: { content: 'ok', logprobs: [-1, -2], completionTokenIds: [5, 6] } }));
    const model = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'm', vllmExtensions: false, tokensAsTokenIds: true });
    // The scripted server names logprob tokens `t<id>`; a vLLM with return_tokens_as_token_ids names them `token_id:<id>`.
    const answer = await model.chat({ messages: [{ role: 'user', content: 'hi' }] });
    expect(server.chatRequests()[0]!.body).toMatchObject({ logprobs: true, return_tokens_as_token_ids: true });
    expect(server.chatRequests()[0]!.body['return_token_ids']).toBeUndefined();
    expect(answer.tokens).toEqual({ logprobs: [-1, -2] });
  });

  it('embeddings over /v1/embeddings, in input order', async () => {
    server = await startScriptedModelServer([]);
    const model = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'm', embeddingModel: 'e' });
    const out = await model.embed(['alpha', 'beta', 'alpha']);
    expect(out.vectors).toHaveLength(3);
    expect(out.vectors[0]).toEqual(out.vectors[2]);
    expect(out.vectors[0]).not.toEqual(out.vectors[1]);
    expect(out.model).toBe('e');
  });
});

describe('backoff', () => {
  it('full jitter stays under the exponential ceiling; Retry-After wins, capped', () => {
    expect(backoffDelayMs(DEFAULT_RETRY, 3, null, () => 0.999)).toBeLessThan(500 * 8);
    expect(backoffDelayMs(DEFAULT_RETRY, 10, null, () => 0.999)).toBeLessThan(DEFAULT_RETRY.maxDelayMs);
    expect(backoffDelayMs(DEFAULT_RETRY, 0, '2', () => 0)).toBe(2000);
    expect(backoffDelayMs(DEFAULT_RETRY, 0, '99999', () => 0)).toBe(DEFAULT_RETRY.maxRetryAfterMs);
    expect(parseRetryAfter(new Date(Date.UTC(2026, 0, 1, 0, 0, 10)).toUTCString(), Date.UTC(2026, 0, 1))).toBe(10_000);
  });
});

describe('agent loop and the endpoint', () => {
  it('an endpoint that stays down ends the attempt as an infrastructure error, not the model failing', async () => {
    server = await startScriptedModelServer(() => reply.error(503));
    sandbox = await openPlainDirSandbox({ files: { 'a.txt': 'a\n' } });
    const result = await runAgent({
      attemptId: 'att-down',
      instruction: 'x',
      model: openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'm', retry: { baseDelayMs: 1, maxAttempts: 3 } }),
      sandbox,
      limits: LimitsSchema.parse({}),
    });
    expect(result.infrastructureError).toBe(true);
    expect(result.stopReason).toMatchObject({ kind: 'infrastructure-error', error: 'Flywheel.ModelUnavailable' });
    expect(result.trajectory.steps.at(-1)).toMatchObject({ type: 'outcome', stopReason: { kind: 'infrastructure-error' } });
  });

  it('a sandbox that breaks mid-attempt is an infrastructure error too', async () => {
    server = await startScriptedModelServer([reply.tool('bash', { command: 'ls' })]);
    const real = await openPlainDirSandbox();
    sandbox = real;
    const broken: SandboxSession = { ...real, workdir: real.workdir, mode: real.mode, exec: async () => Promise.reject(new Error('sandbox process tree vanished')) };
    const result = await runAgent({
      attemptId: 'att-sbx',
      instruction: 'x',
      model: openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'm' }),
      sandbox: broken,
      limits: LimitsSchema.parse({}),
    });
    expect(result.infrastructureError).toBe(true);
    expect(result.stopReason).toMatchObject({ kind: 'infrastructure-error', message: 'sandbox process tree vanished' });
  });

  it('a request the endpoint rejects for good is a model-error stop', async () => {
    server = await startScriptedModelServer(() => reply.error(400));
    sandbox = await openPlainDirSandbox();
    const result = await runAgent({
      attemptId: 'att-400',
      instruction: 'x',
      model: openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'm' }),
      sandbox,
      limits: LimitsSchema.parse({}),
    });
    expect(result.stopReason.kind).toBe('model-error');
    expect(result.infrastructureError).toBe(false);
  });

  it('token ids, logprobs, policy and sampling land on the assistant lines; 429 then success is invisible to the loop', async () => {
    server = await startScriptedModelServer([
      reply.error(429, { 'retry-after': '0' }),
      reply.tool('bash', { command: 'echo hi' }, { promptTokenIds: [10, 11], completionTokenIds: [99, 98, 97], logprobs: [-0.5, -0.25, -0.125] }),
      reply.tool('submit', {}, { promptTokenIds: [10, 11, 12, 13], completionTokenIds: [5], logprobs: [-1] }),
    ]);
    sandbox = await openPlainDirSandbox();
    const result = await runAgent({
      attemptId: 'att-rl',
      instruction: 'x',
      model: openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'policy-model', retry: { baseDelayMs: 1 } }),
      sandbox,
      limits: LimitsSchema.parse({}),
      policy: { checkpoint: 'ckpt-7', weightVersion: 12 },
      sampling: { temperature: 1, topP: 1 },
    });
    expect(result.stopReason.kind).toBe('submitted');
    const assistants = result.trajectory.steps.filter((s) => s.type === 'assistant');
    expect(assistants).toHaveLength(2);
    expect(assistants[0]).toMatchObject({
      messageId: 'att-rl:m1',
      tokens: { promptTokenIds: [10, 11], completionTokenIds: [99, 98, 97], logprobs: [-0.5, -0.25, -0.125] },
      policy: { checkpoint: 'ckpt-7', weightVersion: 12 },
      sampling: { temperature: 1, topP: 1 },
      finishReason: 'tool_calls',
      model: 'policy-model',
      timing: { httpAttempts: 2 },
    });
    expect(assistants[1]).toMatchObject({ messageId: 'att-rl:m2', tokens: { completionTokenIds: [5], logprobs: [-1] } });
    expect(result.trajectory.header).toMatchObject({ policy: { checkpoint: 'ckpt-7', weightVersion: 12 }, model: { id: expect.stringContaining('policy-model') } });
  });
});

describe('Bedrock Converse mapping', () => {
  it('system apart, tool calls as toolUse, tool results merged into one user turn', () => {
    const { system, messages } = toConverseMessages([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'do it' },
      { role: 'assistant', content: '', toolCalls: [{ id: 't1', name: 'bash', arguments: '{"command":"ls"}' }, { id: 't2', name: 'list', arguments: '{}' }] },
      { role: 'tool', toolCallId: 't1', content: 'a', isError: false },
      { role: 'tool', toolCallId: 't2', content: 'boom', isError: true },
    ]);
    expect(system).toEqual([{ text: 'sys' }]);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(messages[1]!.content).toEqual([
      { toolUse: { toolUseId: 't1', name: 'bash', input: { command: 'ls' } } },
      { toolUse: { toolUseId: 't2', name: 'list', input: {} } },
    ]);
    expect(messages[2]!.content).toEqual([
      { toolResult: { toolUseId: 't1', content: [{ text: 'a' }], status: 'success' } },
      { toolResult: { toolUseId: 't2', content: [{ text: 'boom' }], status: 'error' } },
    ]);
  });
});

describe('Bedrock Converse driver over real HTTP (the scripted server speaks the Converse wire format)', () => {
  const client = (endpoint: string, maxAttempts = 3) =>
    new BedrockRuntimeClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' }, maxAttempts, retryMode: 'standard',
      // The Bedrock runtime client defaults to HTTP/2 (for bidirectional streams); the scripted server speaks HTTP/1.1.
      requestHandler: new NodeHttpHandler() });

  it('drives the agent loop: toolUse → tool, toolResult back, end_turn; usage mapped', async () => {
    server = await startScriptedModelServer([reply.tool('bash', { command: 'echo from-bedrock' }), reply.tool('submit', {})]);
    sandbox = await openPlainDirSandbox();
    const origin = server.baseUrl.replace(/\/v1$/, '');
    const model = bedrockConverseModel({ modelId: 'anthropic.claude-test', client: client(origin) });
    const result = await runAgent({ attemptId: 'att-br', instruction: 'x', model, sandbox, limits: LimitsSchema.parse({}) });
    expect(result.stopReason.kind).toBe('submitted');
    const second = server.chatRequests()[1]!;
    expect(second.path).toBe('/model/anthropic.claude-test/converse');
    expect(second.body['toolConfig']).toMatchObject({ tools: expect.arrayContaining([expect.objectContaining({ toolSpec: expect.objectContaining({ name: 'bash' }) })]) });
    const messages = second.body['messages'] as Array<{ role: string; content: Array<Record<string, unknown>> }>;
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(messages[2]!.content[0]).toMatchObject({ toolResult: { toolUseId: 'tooluse_0_0', status: 'success' } });
    expect(JSON.stringify(messages[2]!.content[0])).toContain('from-bedrock');
    expect(result.usage).toEqual({ promptTokens: 20, completionTokens: 10, cachedTokens: 0 });
  });

  it('throttling that never ends is Flywheel.ModelUnavailable', async () => {
    server = await startScriptedModelServer(() => reply.error(429, { 'retry-after': '0' }));
    const model = bedrockConverseModel({ modelId: 'm', client: client(server.baseUrl.replace(/\/v1$/, ''), 2) });
    await expect(model.chat({ messages: [{ role: 'user', content: 'hi' }] })).rejects.toBeInstanceOf(ModelUnavailableError);
    expect(server.chatRequests().length).toBe(2);
  });
});
