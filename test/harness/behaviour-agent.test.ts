import { afterEach, describe, expect, it } from 'vitest';
import { runAgent, type RunAgentInput } from '../../lib/harness/agent/run-agent.ts';
import { USER_GONE } from '../../lib/harness/agent/simulated-user.ts';
import { NO_ANSWER, SUBMIT_HELD } from '../../lib/harness/agent/user-turns.ts';
import type { SandboxSession } from '../../lib/harness/sandbox/sandbox.ts';
import { parseTaskBehaviour, type TaskBehaviourInput } from '../../lib/harness/task/behaviour-schema.ts';
import { LimitsSchema } from '../../lib/harness/task/task-schema.ts';
import { fromAtif, toAtif } from '../../lib/harness/trajectory/atif.ts';
import { finalServiceStates, serviceCalls, serviceCallsText, userTurns } from '../../lib/harness/trajectory/behaviour-events.ts';
import { parseJsonl, toJsonl, type EventLine, type Trajectory } from '../../lib/harness/trajectory/trajectory-schema.ts';
import { openAiCompatibleModel } from '../../lib/models/openai-compatible.ts';
import { openPlainDirSandbox } from '../support/plain-dir-sandbox.ts';
import { reply, startScriptedModelServer, type Script, type ScriptedModelServer } from '../support/scripted-model-server.ts';

const servers: ScriptedModelServer[] = [];
let sandbox: SandboxSession | undefined;
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  await sandbox?.close();
  sandbox = undefined;
});

async function model(script: Script, name = 'scripted-coder') {
  const server = await startScriptedModelServer(script);
  servers.push(server);
  return { server, model: openAiCompatibleModel({ baseUrl: server.baseUrl, model: name, retry: { baseDelayMs: 1, maxAttempts: 2 } }) };
}

async function attempt(script: Script, behaviour: TaskBehaviourInput, extra: Partial<RunAgentInput> = {}) {
  const agent = await model(script);
  sandbox = await openPlainDirSandbox({ files: { 'README.md': 'hello\n', 'AGENTS.md': 'Run `npm test` before you submit.\n' } });
  const result = await runAgent({
    attemptId: 'att-b',
    instruction: 'Tidy the README.',
    model: agent.model,
    sandbox,
    limits: LimitsSchema.parse({ turns: 12 }),
    behaviour: parseTaskBehaviour(behaviour),
    ...extra,
  });
  return { result, server: agent.server };
}

type Sent = Array<{ role: string; content: string | null; tool_call_id?: string }>;
const sent = (server: ScriptedModelServer, i: number) => server.chatRequests()[i]!.body['messages'] as Sent;
const toolNames = (server: ScriptedModelServer, i: number) => (server.chatRequests()[i]!.body['tools'] as Array<{ function: { name: string } }>).map((t) => t.function.name);
const events = (t: Trajectory, kind: string) => t.steps.filter((s): s is EventLine => s.type === 'event' && s.kind === kind);

describe('scripted user turns', () => {
  it('afterTurn n: the text is a user message after turn n, before the next model call, with a user.turn event', async () => {
    const { result, server } = await attempt(
      [reply.tool('read_file', { path: 'README.md' }), reply.tool('bash', { command: 'true' }), reply.tool('submit', {})],
      { userTurns: [{ afterTurn: 1, text: 'Stop: the build on main is red, look at that first.' }] },
    );
    expect(result.stopReason.kind).toBe('submitted');
    expect(sent(server, 0).filter((m) => m.role === 'user')).toHaveLength(1);
    expect(sent(server, 1).at(-1)).toMatchObject({ role: 'user', content: 'Stop: the build on main is red, look at that first.' });
    expect(sent(server, 1).at(-2)).toMatchObject({ role: 'tool' });
    const [event] = events(result.trajectory, 'user.turn');
    expect(event).toMatchObject({ messageId: 'att-b:m1', detail: { source: 'script', delivered: 'message', userMessageId: 'att-b:m1:u1', index: 0, trigger: { afterTurn: 1 } } });
    expect(result.trajectory.steps.find((s) => s.type === 'message' && s.messageId === 'att-b:m1:u1')).toMatchObject({ role: 'user' });
    expect(userTurns(result.trajectory)).toEqual([expect.objectContaining({ text: 'Stop: the build on main is red, look at that first.', source: 'script' })]);
  });

  it('on tool-call of one tool, its second occurrence: fires then and only then', async () => {
    const { result, server } = await attempt(
      [reply.tool('read_file', { path: 'README.md' }), reply.tool('bash', { command: 'true' }), reply.tool('read_file', { path: 'AGENTS.md' }), reply.tool('submit', {})],
      { userTurns: [{ on: 'tool-call', calledTool: 'read_file', occurrence: 2, text: 'Also follow AGENTS.md.' }] },
    );
    expect(result.turns).toBe(4);
    for (const i of [1, 2]) expect(sent(server, i).some((m) => m.content === 'Also follow AGENTS.md.')).toBe(false);
    expect(sent(server, 3).at(-1)).toMatchObject({ role: 'user', content: 'Also follow AGENTS.md.' });
    expect(events(result.trajectory, 'user.turn')[0]).toMatchObject({ messageId: 'att-b:m3', detail: { trigger: { on: 'tool-call', calledTool: 'read_file', occurrence: 2 } } });
  });

  it('on submit: the first submission is held for the follow-up, the second ends the attempt', async () => {
    const { result, server } = await attempt([reply.tool('submit', { answer: 'first' }), reply.tool('submit', { answer: 'second' })], {
      userTurns: [{ on: 'submit', text: 'Thanks. One more thing: keep the trailing newline.' }],
    });
    expect(result.stopReason).toEqual({ kind: 'submitted', answer: 'second' });
    expect(result.turns).toBe(2);
    expect(sent(server, 1).at(-2)).toMatchObject({ role: 'tool', content: SUBMIT_HELD });
    expect(sent(server, 1).at(-1)).toMatchObject({ role: 'user', content: 'Thanks. One more thing: keep the trailing newline.' });
    expect(events(result.trajectory, 'submit.held')).toHaveLength(1);
  });

  it('on ask-user: the scripted text answers ask_user as its tool result; a second question gets no answer', async () => {
    const { result, server } = await attempt(
      [reply.tool('ask_user', { question: 'Which README section?' }), reply.tool('ask_user', { question: 'Anything else?' }), reply.tool('submit', {})],
      { userTurns: [{ on: 'ask-user', text: 'Only the Install section.' }] },
    );
    expect(toolNames(server, 0)).toContain('ask_user');
    expect(sent(server, 1).at(-1)).toMatchObject({ role: 'tool', content: 'Only the Install section.' });
    expect(sent(server, 2).at(-1)).toMatchObject({ role: 'tool', content: NO_ANSWER });
    expect(events(result.trajectory, 'user.turn')[0]).toMatchObject({ detail: { source: 'script', delivered: 'tool-result', question: 'Which README section?' } });
    expect(events(result.trajectory, 'user.unanswered')).toHaveLength(1);
  });

  it('on no-tool-call: the text replaces the nudge', async () => {
    const { result, server } = await attempt([reply.text('Should I also fix the typos?'), reply.tool('submit', {})], { userTurns: [{ on: 'no-tool-call', text: 'Yes, typos too.' }] });
    expect(result.stopReason.kind).toBe('submitted');
    expect(sent(server, 1).at(-1)).toMatchObject({ role: 'user', content: 'Yes, typos too.' });
    expect(sent(server, 1).filter((m) => m.role === 'user')).toHaveLength(2);
  });
});

describe('a simulated user over the scripted model server', () => {
  const simulated = { persona: 'A terse staff engineer.', goal: 'The README gets an Install section.', knowledge: 'The package installs with pnpm.', maxTurns: 2 };

  it('answers ask_user and a message without a tool call, in character, then leaves after the stop phrase', async () => {
    const user = await model([reply.text('Use pnpm.'), reply.text('Good. [DONE]')], 'scripted-user');
    const { result, server } = await attempt(
      [reply.tool('ask_user', { question: 'npm or pnpm?' }), reply.text('I added an Install section using pnpm.'), reply.tool('ask_user', { question: 'Anything else?' }), reply.tool('submit', {})],
      { simulatedUser: simulated },
      { userModel: user.model },
    );
    expect(result.stopReason.kind).toBe('submitted');
    expect(sent(server, 1).at(-1)).toMatchObject({ role: 'tool', content: 'Use pnpm.' });
    expect(sent(server, 2).at(-1)).toMatchObject({ role: 'user', content: 'Good.' });
    expect(sent(server, 3).at(-1)).toMatchObject({ role: 'tool', content: USER_GONE });
    // The user model saw its persona, goal and knowledge, and the agent's words as the other side of the chat.
    const first = user.server.chatRequests()[0]!.body['messages'] as Sent;
    expect(first[0]!.role).toBe('system');
    expect(first[0]!.content).toContain('A terse staff engineer.');
    expect(first[0]!.content).toContain('The package installs with pnpm.');
    expect(first[0]!.content).toContain('Tidy the README.');
    expect(first.at(-1)).toMatchObject({ role: 'user', content: 'npm or pnpm?' });
    const second = user.server.chatRequests()[1]!.body['messages'] as Sent;
    expect(second.slice(1).map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(user.server.chatRequests()).toHaveLength(2);
    const turns = events(result.trajectory, 'user.turn');
    expect(turns.map((e) => e.detail['source'])).toEqual(['simulated-user', 'simulated-user', 'simulated-user']);
    expect(turns[1]!.detail).toMatchObject({ ended: true, turn: 2, model: 'scripted-user' });
    expect(turns[2]!.detail).toMatchObject({ gone: true });
  });

  it("keeps the user model's tokens apart (userUsage on the result and the outcome) and counts them toward the cost limit when priced", async () => {
    // Each scripted reply spends 10 prompt + 5 completion tokens.
    const user = await model([reply.text('Use pnpm.'), reply.text('Good. [DONE]')], 'scripted-user');
    const { result } = await attempt(
      [reply.tool('ask_user', { question: 'npm or pnpm?' }), reply.text('I added an Install section using pnpm.'), reply.tool('submit', {})],
      { simulatedUser: simulated },
      { userModel: user.model },
    );
    expect(result.stopReason.kind).toBe('submitted');
    expect(result.usage).toMatchObject({ promptTokens: 30, completionTokens: 15 });
    expect(result.userUsage).toEqual({ promptTokens: 20, completionTokens: 10, cachedTokens: 0 });
    const outcome = result.trajectory.steps.find((s) => s.type === 'outcome');
    expect(outcome).toMatchObject({ userUsage: { promptTokens: 20, completionTokens: 10 } });
    expect(parseJsonl(toJsonl(result.trajectory)).steps.find((s) => s.type === 'outcome')).toMatchObject({ userUsage: { promptTokens: 20 } });
    // Priced: the policy is free here, the user is not ($15 a reply), and a $10 limit stops the attempt after its first answer.
    const paid = await model([reply.text('Use pnpm.'), reply.text('Good. [DONE]')], 'scripted-user');
    const priced = await attempt(
      [reply.tool('ask_user', { question: 'npm or pnpm?' }), reply.text('I added an Install section using pnpm.'), reply.tool('submit', {})],
      { simulatedUser: simulated },
      {
        userModel: paid.model,
        limits: LimitsSchema.parse({ turns: 12, costUsd: 10 }),
        pricing: { promptPerMillion: 0, completionPerMillion: 0 },
        userPricing: { promptPerMillion: 1e6, completionPerMillion: 1e6 },
      },
    );
    expect(priced.result.stopReason).toEqual({ kind: 'limit', limit: 'cost' });
    expect(priced.result.costUsd).toBe(15);
    expect(priced.result.userUsage).toMatchObject({ promptTokens: 10, completionTokens: 5 });
  });

  it('without a user model the attempt ends as an infrastructure error naming it, before the agent runs', async () => {
    const { result, server } = await attempt([reply.tool('submit', {})], { simulatedUser: simulated });
    expect(result.stopReason).toMatchObject({ kind: 'infrastructure-error', error: 'Flywheel.ConfigurationError', message: expect.stringMatching(/no user model/) });
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('a user model that stays down is an infrastructure error, not the agent failing', async () => {
    const user = await model(() => reply.error(503), 'scripted-user');
    const { result } = await attempt([reply.tool('ask_user', { question: 'npm or pnpm?' })], { simulatedUser: simulated }, { userModel: user.model });
    expect(result.infrastructureError).toBe(true);
    expect(result.stopReason).toMatchObject({ kind: 'infrastructure-error', message: expect.stringMatching(/simulated user/) });
  });
});

describe('tools that come and go', () => {
  it('removed after turn n: gone from the list, a notice, and a clear error when called', async () => {
    const { result, server } = await attempt([reply.tool('bash', { command: 'echo hi' }), reply.tool('bash', { command: 'echo again' }), reply.tool('submit', {})], {
      tools: { changes: [{ tool: 'bash', change: 'remove', afterTurn: 1 }] },
    });
    expect(toolNames(server, 0)).toContain('bash');
    expect(toolNames(server, 1)).not.toContain('bash');
    expect(sent(server, 1).at(-1)).toMatchObject({ role: 'user', content: '[harness] The tool bash is no longer available.' });
    expect(sent(server, 2).at(-1)!.content).toMatch(/the tool "bash" is no longer available: it was removed during this attempt\. Available tools: read_file/);
    expect(events(result.trajectory, 'tool.removed')[0]).toMatchObject({ messageId: 'att-b:m1', detail: { tool: 'bash', trigger: { afterTurn: 1 } } });
    expect(events(result.trajectory, 'tool.unavailable')[0]).toMatchObject({ messageId: 'att-b:m2', detail: { tool: 'bash' } });
    expect(result.trajectory.header.tools.map((t) => t.name)).toContain('bash');
  });

  it('a task-defined tool added on an event: absent at first, then offered and run in the sandbox with its arguments on stdin', async () => {
    const { result, server } = await attempt(
      [reply.tool('read_file', { path: 'AGENTS.md' }), reply.tool('lint_docs', { path: 'README.md', strict: true }), reply.tool('submit', {})],
      {
        tools: {
          define: [
            {
              name: 'lint_docs',
              description: 'Lint a markdown file.',
              parameters: { path: { type: 'string' }, strict: { type: 'boolean', required: false } },
              command: 'cat; echo; echo linted',
            },
          ],
          changes: [{ tool: 'lint_docs', change: 'add', on: 'tool-call', calledTool: 'read_file', notice: '' }],
        },
      },
    );
    expect(toolNames(server, 0)).not.toContain('lint_docs');
    expect(toolNames(server, 1)).toContain('lint_docs');
    expect(sent(server, 1).at(-1)!.role).toBe('tool');
    const lint = result.trajectory.steps.find((s) => s.type === 'tool_result' && s.name === 'lint_docs');
    expect(lint?.type === 'tool_result' && lint.content).toBe('{"path":"README.md","strict":true}\nlinted\n');
    expect(events(result.trajectory, 'tool.added')[0]).toMatchObject({ detail: { tool: 'lint_docs', trigger: { on: 'tool-call', calledTool: 'read_file' } } });
  });

  it('a tool called before it is added is unknown to the model', async () => {
    const { result } = await attempt([reply.tool('lint_docs', {}), reply.tool('submit', {})], {
      tools: { define: [{ name: 'lint_docs', description: 'Lint.', respond: 'ok' }], changes: [{ tool: 'lint_docs', change: 'add', afterTurn: 5 }] },
    });
    expect(events(result.trajectory, 'tool.unknown')).toHaveLength(1);
  });
});

describe('fake services', () => {
  const services = {
    chat: {
      channels: [
        { name: 'eng', topic: 'engineering', messages: [{ user: 'ana', text: 'Post here when the README is done.', at: '2026-12-03T09:00:00Z' }] },
        { name: 'random', messages: [] },
      ],
      replies: [{ channel: 'eng', match: ['done', 'finished'], user: 'ana', text: 'Thanks!' }],
    },
    incidents: {
      metrics: [{ name: 'http_5xx_rate', labels: { service: 'api' }, unit: 'ratio', points: [{ at: '2026-12-03T10:00:00Z', value: 0.01 }, { at: '2026-12-03T10:05:00Z', value: 0.2 }] }],
      incidents: [{ id: 'INC-7', title: 'API errors', severity: 'sev2' as const, openedAt: '2026-12-03T10:06:00Z' }],
    },
  };

  it('calls are recorded as service.call events with args and results; state changes; the final state is recorded', async () => {
    const { result, server } = await attempt(
      [
        reply.tool('chat_list_channels', {}),
        reply.tool('chat_read', { channel: 'eng' }),
        reply.tool('chat_post', { channel: 'nope', text: 'hi' }),
        reply.tool('metrics_query', { name: 'http_5xx_rate', labels: { service: 'api' } }),
        reply.tool('incident_update', { id: 'INC-7', status: 'acknowledged', note: 'Rolling back deploy 4f2a.' }),
        reply.tool('chat_post', { channel: 'eng', text: 'README done; INC-7 acknowledged.' }),
        reply.tool('submit', {}),
      ],
      { services, userTurns: [{ on: 'service-call', service: 'incidents', text: 'Please also post in #eng.' }] },
    );
    expect(result.stopReason.kind).toBe('submitted');
    expect(toolNames(server, 0)).toEqual(expect.arrayContaining(['chat_list_channels', 'chat_read', 'chat_post', 'metrics_query', 'incidents_list', 'incident_get', 'incident_update']));
    const calls = serviceCalls(result.trajectory);
    expect(calls.map((c) => `${c.service}.${c.tool}${c.isError ? '!' : ''}`)).toEqual(['chat.chat_list_channels', 'chat.chat_read', 'chat.chat_post!', 'incidents.metrics_query', 'incidents.incident_update', 'chat.chat_post']);
    expect(calls[0]!.result).toContain('"name": "eng"');
    expect(calls[1]!.result).toContain('Post here when the README is done.');
    expect(calls[2]!.result).toMatch(/no channel "nope"; channels: eng, random/);
    expect(JSON.parse(calls[3]!.result)[0].stats).toEqual({ min: 0.01, max: 0.2, avg: 0.105, last: 0.2 });
    expect(calls[4]!.args).toEqual({ id: 'INC-7', status: 'acknowledged', note: 'Rolling back deploy 4f2a.' });
    expect(calls[5]!.result).toContain('Thanks!');
    expect(calls[5]!).toMatchObject({ messageId: 'att-b:m6', toolCallId: 'call_5_0' });
    // The user turn fired on the first incidents call only.
    expect(sent(server, 4).at(-1)).toMatchObject({ role: 'user', content: 'Please also post in #eng.' });
    expect(events(result.trajectory, 'user.turn')).toHaveLength(1);
    const states = finalServiceStates(result.trajectory) as { chat: { channels: Array<{ name: string; messages: Array<{ user: string; text: string }> }> }; incidents: { incidents: Array<{ status: string; notes: unknown[] }> } };
    expect(states.chat.channels[0]!.messages.map((m) => m.user)).toEqual(['ana', 'flywheel-agent', 'ana']);
    expect(states.incidents.incidents[0]).toMatchObject({ status: 'acknowledged', notes: [expect.objectContaining({ author: 'flywheel-agent', text: 'Rolling back deploy 4f2a.' })] });
    expect(result.services).toEqual(states);
    expect(serviceCallsText(result.trajectory)).toContain('chat.chat_post {"channel":"eng","text":"README done; INC-7 acknowledged."}');
  });

  it('the trajectory with behaviour events survives JSON Lines and ATIF', async () => {
    const { result } = await attempt([reply.tool('chat_post', { channel: 'eng', text: 'done' }), reply.tool('submit', {})], {
      services,
      userTurns: [{ afterTurn: 1, text: 'ok' }],
      tools: { changes: [{ tool: 'chat_read', change: 'remove', afterTurn: 1 }] },
    });
    expect(parseJsonl(toJsonl(result.trajectory))).toEqual(result.trajectory);
    const back = fromAtif(JSON.parse(JSON.stringify(toAtif(result.trajectory))));
    expect(back).toEqual(result.trajectory);
    expect(serviceCalls(back)).toHaveLength(1);
    expect(toAtif(result.trajectory).steps.some((s) => s.source === 'user' && s.message === 'ok')).toBe(true);
  });
});
