import { afterEach, describe, expect, it } from 'vitest';
import { adaptiveConcurrency } from '../../../lib/models/adaptive-concurrency.ts';
import { createModel } from '../../../lib/models/create-model.ts';
import { openAiCompatibleModel } from '../../../lib/models/openai-compatible.ts';
import { reply, startScriptedModelServer, type ScriptedModelServer } from '../../support/scripted-model-server.ts';

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('adaptive concurrency', () => {
  it('keeps calls in flight within the window, halves it on 429s and widens it on clean calls', async () => {
    let inFlight = 0;
    let peak = 0;
    // Requests 0–3 see a 429 each (every one gets retried), the rest succeed after a short delay.
    server = await startScriptedModelServer((_req, i) => (i < 4 ? reply.error(429, { 'retry-after': '0' }) : { reply: { content: 'ok', delayMs: 30 } }));
    const base = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'm', retry: { baseDelayMs: 1 } });
    const counting = {
      ...base,
      async chat(r: Parameters<typeof base.chat>[0]) {
        inFlight++;
        peak = Math.max(peak, inFlight);
        try {
          return await base.chat(r);
        } finally {
          inFlight--;
        }
      },
    };
    const model = adaptiveConcurrency(counting, { initial: 4, max: 8 });
    await Promise.all(Array.from({ length: 4 }, () => model.chat({ messages: [{ role: 'user', content: 'x' }] })));
    expect(peak).toBeLessThanOrEqual(4);
    expect(model.limit()).toBe(1);
    for (let i = 0; i < 6; i++) await model.chat({ messages: [{ role: 'user', content: 'x' }] });
    expect(model.limit()).toBeGreaterThanOrEqual(2);
    expect(model.inFlight()).toBe(0);
  });
});

describe('createModel', () => {
  it('builds an OpenAI-compatible model from openai:<model>@<url> that talks to that server', async () => {
    server = await startScriptedModelServer([reply.text('hi')]);
    const model = createModel(`openai:my-model@${server.baseUrl}`, { env: { OPENAI_API_KEY: 'k1' } });
    expect(model.id).toBe(`openai:my-model@${server.baseUrl}`);
    expect((await model.chat({ messages: [{ role: 'user', content: 'x' }] })).message.content).toBe('hi');
    expect(server.chatRequests()[0]!.body['model']).toBe('my-model');
    expect(server.chatRequests()[0]!.headers['authorization']).toBe('Bearer k1');
  });

  it('builds Bedrock from bedrock:<modelId> and rejects unknown specs', () => {
    expect(createModel('bedrock:anthropic.claude-x:0', { region: 'us-east-1' }).id).toBe('bedrock:anthropic.claude-x:0');
    expect(() => createModel('gpt-4')).toThrow(/want openai:<model>@<baseUrl> or bedrock/);
    expect(() => createModel('openai:m@not-a-url')).toThrow(/http\(s\) base URL/);
  });
});
