import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgent, type RunAgentInput } from '../../../lib/harness/agent/run-agent.ts';
import { LimitsSchema } from '../../../lib/harness/task/task-schema.ts';
import type { SandboxSession } from '../../../lib/harness/sandbox/sandbox.ts';
import { openAiCompatibleModel } from '../../../lib/models/openai-compatible.ts';
import { openPlainDirSandbox } from '../../support/plain-dir-sandbox.ts';
import { reply, startScriptedModelServer, type Script, type ScriptedModelServer } from '../../support/scripted-model-server.ts';

let server: ScriptedModelServer | undefined;
let sandbox: SandboxSession | undefined;
afterEach(async () => {
  await server?.close();
  await sandbox?.close();
  server = undefined;
  sandbox = undefined;
});

async function attempt(script: Script, overrides: Partial<Omit<RunAgentInput, 'limits'>> & { limits?: Partial<RunAgentInput['limits']> } = {}) {
  server = await startScriptedModelServer(script);
  sandbox = await openPlainDirSandbox({ files: { 'src/add.js': 'export const add = (a, b) => a - b;\n', 'README.md': 'add\nadd\n' } });
  const model = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'scripted-coder', retry: { baseDelayMs: 1, maxAttempts: 3 } });
  const { limits, ...rest } = overrides;
  return runAgent({
    attemptId: 'att-1',
    instruction: 'add() subtracts; make it add.',
    model,
    sandbox,
    limits: LimitsSchema.parse({ turns: 10, ...limits }),
    ...rest,
  });
}

describe('agent loop over a scripted OpenAI-compatible server', () => {
  it('a correct fix: reads, edits, runs, submits; the diff and every tool result are recorded', async () => {
    const result = await attempt([
      reply.tool('read_file', { path: 'src/add.js' }),
      reply.tool('edit', { path: 'src/add.js', oldString: 'a - b', newString: 'a + b' }),
      reply.tool('bash', { command: 'node -e "import(\'./src/add.js\').then(m => console.log(m.add(2, 3)))"' }),
      reply.tool('submit', { answer: 'fixed' }),
    ]);
    expect(result.stopReason).toEqual({ kind: 'submitted', answer: 'fixed' });
    expect(result.infrastructureError).toBe(false);
    expect(result.turns).toBe(4);
    expect(await readFile(join(sandbox!.workdir, 'src/add.js'), 'utf8')).toBe('export const add = (a, b) => a + b;\n');
    expect(result.diff).toContain('+export const add = (a, b) => a + b;');
    const results = result.trajectory.steps.filter((s) => s.type === 'tool_result');
    expect(results.map((r) => r.type === 'tool_result' && r.name)).toEqual(['read_file', 'edit', 'bash', 'submit']);
    expect(results[0]!.type === 'tool_result' && results[0]!.content).toContain('a - b');
    expect(results[2]!.type === 'tool_result' && results[2]!.content.trim()).toBe('5');
    // The model saw the tool results on the next request, answering its call ids.
    const second = server!.chatRequests()[1]!.body['messages'] as Array<Record<string, unknown>>;
    expect(second.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_0_0' });
    // Tools were offered with JSON schemas.
    const tools = server!.chatRequests()[0]!.body['tools'] as Array<{ function: { name: string; parameters: { type: string } } }>;
    expect(tools.map((t) => t.function.name)).toEqual(['bash', 'read_file', 'write_file', 'edit', 'list', 'search', 'submit']);
    expect(tools.every((t) => t.function.parameters.type === 'object')).toBe(true);
    const outcome = result.trajectory.steps.at(-1)!;
    expect(outcome.type === 'outcome' && outcome.stopReason.kind).toBe('submitted');
  });

  it('write_file, list and search work through the sandbox', async () => {
    const result = await attempt([
      reply.tool('write_file', { path: 'src/new/dir/x.txt', content: 'needle here\n' }),
      reply.tool('list', { path: 'src', depth: 3 }),
      reply.tool('search', { pattern: 'need+le', glob: '*.txt' }),
      reply.tool('submit', {}),
    ]);
    const contents = result.trajectory.steps.flatMap((s) => (s.type === 'tool_result' ? [s.content] : []));
    expect(contents[0]).toMatch(/wrote 12 bytes/);
    expect(contents[1]).toContain('src/new/dir/x.txt');
    expect(contents[2]).toContain('src/new/dir/x.txt:1:needle here');
  });

  it('edit errors when the string is missing or not unique, and the model is told why', async () => {
    const result = await attempt([
      reply.tool('edit', { path: 'README.md', oldString: 'add', newString: 'sum' }),
      reply.tool('edit', { path: 'README.md', oldString: 'nothing-like-this', newString: 'x' }),
      reply.tool('submit', {}),
    ]);
    const errors = result.trajectory.steps.flatMap((s) => (s.type === 'tool_result' && s.isError ? [s.content] : []));
    expect(errors[0]).toMatch(/occurs 2 times/);
    expect(errors[1]).toMatch(/not found/);
    expect(await readFile(join(sandbox!.workdir, 'README.md'), 'utf8')).toBe('add\nadd\n');
  });

  it('an unknown tool: a clear error goes back to the model and a tool.unknown event points at the message and span', async () => {
    const result = await attempt([reply.tool('browse_web', { url: 'https://example.com' }), reply.tool('submit', {})]);
    expect(result.stopReason.kind).toBe('submitted');
    const event = result.trajectory.steps.find((s) => s.type === 'event' && s.kind === 'tool.unknown');
    expect(event).toMatchObject({ messageId: 'att-1:m1', span: { toolCallId: 'call_0_0', field: 'arguments', start: 0 } });
    const sent = server!.chatRequests()[1]!.body['messages'] as Array<{ role: string; content: string }>;
    expect(sent.at(-1)!.role).toBe('tool');
    expect(sent.at(-1)!.content).toMatch(/no tool named "browse_web".*bash, read_file/);
  });

  it('bad arguments (schema and malformed JSON): errors back to the model and tool.bad-arguments events', async () => {
    const result = await attempt([
      reply.tool('read_file', { file: 'src/add.js' }),
      reply.tool('bash', '{"command": "ls"'),
      reply.tool('submit', {}),
    ]);
    const events = result.trajectory.steps.filter((s) => s.type === 'event' && s.kind === 'tool.bad-arguments');
    expect(events).toHaveLength(2);
    expect(events.map((e) => e.type === 'event' && e.messageId)).toEqual(['att-1:m1', 'att-1:m2']);
    const sent = server!.chatRequests()[2]!.body['messages'] as Array<{ role: string; content: string }>;
    const toolMessages = sent.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(toolMessages[0]).toMatch(/bad arguments for read_file: path: .*expected string/i);
    expect(toolMessages[1]).toMatch(/not valid JSON/);
  });

  it('an answer without a tool call gets the continue message, then the loop goes on', async () => {
    const result = await attempt([reply.text('I think I am done.'), reply.tool('submit', {})]);
    expect(result.stopReason.kind).toBe('submitted');
    const sent = server!.chatRequests()[1]!.body['messages'] as Array<{ role: string; content: string }>;
    expect(sent.at(-1)).toMatchObject({ role: 'user', content: expect.stringMatching(/call submit/) });
  });

  it('stopOnNoAction ends the attempt as no-action when the model answers without a tool call', async () => {
    const result = await attempt([reply.text('nothing to do')], { stopOnNoAction: true });
    expect(result.stopReason).toEqual({ kind: 'no-action' });
    expect(result.turns).toBe(1);
  });

  describe('a runaway hits each limit and stops cleanly, naming it', () => {
    const forever: Script = () => reply.tool('bash', { command: 'echo still going' });

    it('turns', async () => {
      const result = await attempt(forever, { limits: { turns: 3 } });
      expect(result.stopReason).toEqual({ kind: 'limit', limit: 'turns' });
      expect(result.turns).toBe(3);
      expect(server!.chatRequests()).toHaveLength(3);
      expect(result.trajectory.steps.at(-1)).toMatchObject({ type: 'outcome', limitsHit: ['turns'] });
    });

    it('tokens', async () => {
      const result = await attempt(() => reply.tool('bash', { command: 'true' }, { usage: { prompt_tokens: 40, completion_tokens: 20 } }), { limits: { tokens: 150 } });
      expect(result.stopReason).toEqual({ kind: 'limit', limit: 'tokens' });
      expect(result.turns).toBe(3);
      expect(result.usage.promptTokens + result.usage.completionTokens).toBe(180);
    });

    it('time (a slow model)', async () => {
      const result = await attempt(() => ({ reply: { toolCalls: [{ name: 'bash', arguments: { command: 'true' } }], delayMs: 400 } }), { limits: { wallClockSeconds: 1 } });
      expect(result.stopReason).toEqual({ kind: 'limit', limit: 'time' });
      expect(result.durationMs).toBeLessThan(3000);
    });

    it('time (a command that never ends is killed at the deadline)', async () => {
      const result = await attempt([reply.tool('bash', { command: 'sleep 30' })], { limits: { wallClockSeconds: 0.5 } });
      expect(result.stopReason).toEqual({ kind: 'limit', limit: 'time' });
      expect(result.durationMs).toBeLessThan(5000);
    });

    it('output', async () => {
      const result = await attempt(() => reply.tool('bash', { command: "printf 'x%.0s' $(seq 1 300)" }), { limits: { outputBytes: 1000 } });
      expect(result.stopReason).toEqual({ kind: 'limit', limit: 'output' });
      expect(result.turns).toBe(4);
      expect(result.outputBytes).toBeGreaterThanOrEqual(1000);
    });

    it('cost', async () => {
      const result = await attempt(() => reply.tool('bash', { command: 'true' }, { usage: { prompt_tokens: 1000, completion_tokens: 1000 } }), {
        limits: { costUsd: 0.05 },
        pricing: { promptPerMillion: 10, completionPerMillion: 10 },
      });
      expect(result.stopReason).toEqual({ kind: 'limit', limit: 'cost' });
      expect(result.turns).toBe(3);
      expect(result.costUsd).toBeCloseTo(0.06);
    });
  });
});
