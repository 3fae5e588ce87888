/**
 * What the models port promises, on every driver, over real HTTP (the scripted server speaks each driver's wire
 * format): a completion's text, its tool calls (ids kept, arguments as the model wrote them), token usage and a finish
 * reason mapped to the port's vocabulary with the provider's own kept verbatim; the system prompt, messages, tool
 * results, tools and sampling reach the endpoint; throttling and 5xx are retried and counted in `attempts`; an
 * endpoint that stays down (throttled, failing or unreachable) is `ModelUnavailableError`, a request rejected for good
 * is `ModelRequestError` and is not retried; `embed` returns one vector per text, in order.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ModelRequestError, ModelUnavailableError } from '../../lib/models/model-errors.ts';
import type { ChatRequest, ModelsPort } from '../../lib/ports/models.ts';
import { reply, startScriptedModelServer, type RecordedRequest, type Script, type ScriptedModelServer } from '../support/scripted-model-server.ts';

/** What a driver put on the wire, read back from the recorded request in the port's terms. */
export interface SentChat {
  system: string[];
  /** Text of every user turn, in order. */
  userTexts: string[];
  /** Ids of the tool calls the tool results answer, in order. */
  toolResultIds: string[];
  toolNames: string[];
  maxTokens?: number;
  temperature?: number;
}

export interface ModelsUnderTest {
  /** The driver pointed at `server`, trying each request at most `maxAttempts` times with short backoff. */
  model(server: ScriptedModelServer, maxAttempts: number): ModelsPort;
  /** How this wire names a reply cut at the token limit (OpenAI `length`, Converse `max_tokens`). */
  lengthStopReason: string;
  sent(request: RecordedRequest): SentChat;
}

const MAX_ATTEMPTS = 3;
const hi: ChatRequest = { messages: [{ role: 'user', content: 'hi' }] };

export function describeModelsContract(name: string, driver: ModelsUnderTest): void {
  describe(`models contract: ${name}`, () => {
    let server: ScriptedModelServer | undefined;
    afterEach(async () => {
      await server?.close();
      server = undefined;
    });
    const start = async (script: Script): Promise<{ model: ModelsPort; server: ScriptedModelServer }> => {
      server = await startScriptedModelServer(script);
      return { model: driver.model(server, MAX_ATTEMPTS), server };
    };

    it('returns the completion text, token usage and a stop finish reason in one attempt', async () => {
      const { model } = await start([reply.text('hello there', { usage: { prompt_tokens: 12, completion_tokens: 3 } })]);
      const answer = await model.chat(hi);
      expect(answer.message).toEqual({ role: 'assistant', content: 'hello there', toolCalls: [] });
      expect(answer.finishReason).toBe('stop');
      expect(answer.usage).toMatchObject({ promptTokens: 12, completionTokens: 3 });
      expect(answer.attempts).toBe(1);
      expect(answer.model).toEqual(expect.any(String));
      expect(model.id).toEqual(expect.any(String));
    });

    it('sends the system prompt, the turns, the tool results, the tools and the sampling', async () => {
      const { model, server } = await start([reply.text('done')]);
      await model.chat({
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'list files' },
          { role: 'assistant', content: '', toolCalls: [{ id: 'call-1', name: 'bash', arguments: '{"command":"ls"}' }] },
          { role: 'tool', toolCallId: 'call-1', name: 'bash', content: 'a.txt' },
          { role: 'user', content: 'and now?' },
        ],
        tools: [{ name: 'bash', description: 'run a command', parameters: { type: 'object', properties: { command: { type: 'string' } } } }],
        sampling: { maxTokens: 64, temperature: 0.5 },
      });
      const [request] = server.chatRequests();
      expect(driver.sent(request!)).toEqual({
        system: ['be brief'],
        userTexts: ['list files', 'and now?'],
        toolResultIds: ['call-1'],
        toolNames: ['bash'],
        maxTokens: 64,
        temperature: 0.5,
      });
    });

    it('returns tool calls with their ids, names and arguments, finish reason tool_calls', async () => {
      const { model } = await start([
        reply.tools([
          { id: 'call-a', name: 'bash', arguments: { command: 'ls -la' } },
          { id: 'call-b', name: 'submit', arguments: {} },
        ]),
      ]);
      const answer = await model.chat(hi);
      expect(answer.message.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: JSON.parse(call.arguments) as unknown }))).toEqual([
        { id: 'call-a', name: 'bash', arguments: { command: 'ls -la' } },
        { id: 'call-b', name: 'submit', arguments: {} },
      ]);
      expect(answer.finishReason).toBe('tool_calls');
    });

    it('maps a reply cut at the token limit to length, keeping the raw reason', async () => {
      const { model } = await start([reply.text('cut sho', { finishReason: driver.lengthStopReason })]);
      const answer = await model.chat(hi);
      expect(answer.finishReason).toBe('length');
      expect(answer.rawFinishReason).toBe(driver.lengthStopReason);
      expect(answer.message.content).toBe('cut sho');
    });

    it('retries throttling and counts the attempts', async () => {
      const { model, server } = await start([reply.error(429, { 'retry-after': '0' }), reply.text('after the throttle')]);
      const answer = await model.chat(hi);
      expect(answer.message.content).toBe('after the throttle');
      expect(answer.attempts).toBe(2);
      expect(server.chatRequests()).toHaveLength(2);
    });

    it('retries a server error and counts the attempts', async () => {
      const { model, server } = await start([reply.error(500), reply.text('recovered')]);
      const answer = await model.chat(hi);
      expect(answer.message.content).toBe('recovered');
      expect(answer.attempts).toBe(2);
      expect(server.chatRequests()).toHaveLength(2);
    });

    it('throws ModelUnavailableError when throttling never ends, after every attempt', async () => {
      const { model, server } = await start(() => reply.error(429, { 'retry-after': '0' }));
      const error = await model.chat(hi).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ModelUnavailableError);
      expect(error).toMatchObject({ name: 'Flywheel.ModelUnavailable', lastStatus: 429 });
      expect(server.chatRequests()).toHaveLength(MAX_ATTEMPTS);
    });

    it('throws ModelUnavailableError when the endpoint answers 5xx on every attempt', async () => {
      const { model, server } = await start(() => reply.error(503));
      const error = await model.chat(hi).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ModelUnavailableError);
      expect(error).toMatchObject({ lastStatus: 503 });
      expect(server.chatRequests()).toHaveLength(MAX_ATTEMPTS);
    });

    it('throws ModelUnavailableError when nothing listens', async () => {
      const { model, server } = await start([]);
      await server.close();
      await expect(model.chat(hi)).rejects.toBeInstanceOf(ModelUnavailableError);
    });

    it('throws ModelRequestError for a request rejected for good, without retrying it', async () => {
      const { model, server } = await start(() => reply.error(400));
      const error = await model.chat(hi).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ModelRequestError);
      expect(error).toMatchObject({ name: 'Flywheel.ModelRequestError', status: 400 });
      expect(error).not.toBeInstanceOf(ModelUnavailableError);
      expect(server.chatRequests()).toHaveLength(1);
    });

    it('embeds each text into one vector, in order', async () => {
      const { model } = await start([]);
      const texts = ['alpha beta', 'gamma', 'alpha beta'];
      const embedded = await model.embed(texts);
      expect(embedded.vectors).toHaveLength(3);
      for (const vector of embedded.vectors) expect(vector.length).toBeGreaterThan(0);
      expect(embedded.vectors[2]).toEqual(embedded.vectors[0]);
      expect(embedded.vectors[1]).not.toEqual(embedded.vectors[0]);
      expect(embedded.model).toEqual(expect.any(String));
    });
  });
}
