import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { bedrockConverseModel } from '../../lib/drivers/aws/bedrock-converse.ts';
import { openAiCompatibleModel } from '../../lib/models/openai-compatible.ts';
import type { ScriptedModelServer } from '../support/scripted-model-server.ts';
import { describeModelsContract, type SentChat } from './models.contract.ts';

type Body = Record<string, unknown>;
const texts = (value: unknown): string[] => (typeof value === 'string' ? [value] : []);

describeModelsContract('OpenAI-compatible (scripted /v1/chat/completions)', {
  model: (server: ScriptedModelServer, maxAttempts: number) =>
    openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'contract-model', retry: { maxAttempts, baseDelayMs: 1, maxDelayMs: 10 } }),
  lengthStopReason: 'length',
  sent: ({ body }): SentChat => {
    const messages = body['messages'] as Body[];
    const tools = (body['tools'] ?? []) as Array<{ function: { name: string } }>;
    return {
      system: messages.filter((m) => m['role'] === 'system').flatMap((m) => texts(m['content'])),
      userTexts: messages.filter((m) => m['role'] === 'user').flatMap((m) => texts(m['content'])),
      toolResultIds: messages.filter((m) => m['role'] === 'tool').map((m) => String(m['tool_call_id'])),
      toolNames: tools.map((tool) => tool.function.name),
      ...(body['max_tokens'] !== undefined ? { maxTokens: Number(body['max_tokens']) } : {}),
      ...(body['temperature'] !== undefined ? { temperature: Number(body['temperature']) } : {}),
    };
  },
});

describeModelsContract('Bedrock Converse (scripted /model/{modelId}/converse)', {
  model: (server: ScriptedModelServer, maxAttempts: number) =>
    bedrockConverseModel({
      modelId: 'anthropic.contract-model',
      client: new BedrockRuntimeClient({
        endpoint: server.baseUrl.replace(/\/v1$/, ''),
        region: 'us-east-1',
        credentials: { accessKeyId: 'AKIDCONTRACT', secretAccessKey: 'contract' },
        maxAttempts,
        retryMode: 'standard',
        // The runtime client defaults to HTTP/2 (for bidirectional streams); the scripted server speaks HTTP/1.1.
        requestHandler: new NodeHttpHandler(),
      }),
    }),
  lengthStopReason: 'max_tokens',
  sent: ({ body }): SentChat => {
    const messages = body['messages'] as Array<{ role: string; content: Body[] }>;
    const blocks = (role: string) => messages.filter((m) => m.role === role).flatMap((m) => m.content);
    const tools = ((body['toolConfig'] as { tools?: Array<{ toolSpec: { name: string } }> } | undefined)?.tools ?? []);
    const inference = (body['inferenceConfig'] ?? {}) as Body;
    return {
      system: ((body['system'] ?? []) as Body[]).flatMap((block) => texts(block['text'])),
      userTexts: blocks('user').flatMap((block) => texts(block['text'])),
      toolResultIds: blocks('user').flatMap((block) => (block['toolResult'] ? [String((block['toolResult'] as Body)['toolUseId'])] : [])),
      toolNames: tools.map((tool) => tool.toolSpec.name),
      ...(inference['maxTokens'] !== undefined ? { maxTokens: Number(inference['maxTokens']) } : {}),
      ...(inference['temperature'] !== undefined ? { temperature: Number(inference['temperature']) } : {}),
    };
  },
});
