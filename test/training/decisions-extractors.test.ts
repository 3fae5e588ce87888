/**
 * The decision extractors over real trajectory JSON Lines: the harness's events (a real agent attempt over the
 * scripted model server, and hand-built trajectories for tools that go away and blocked shortcuts), a judge's failed
 * criterion (evidence in one message vs two), a person's comment (consent refused), and a locator model over the
 * scripted model server (a good answer, an unknown messageId, prose).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Judgement } from '../../lib/judges/schemas.ts';
import { openAiCompatibleModel } from '../../lib/models/openai-compatible.ts';
import { exactTokenSpan } from '../../lib/training/decisions/decision-candidate.ts';
import { harnessEventDecisions } from '../../lib/training/decisions/harness-event-decisions.ts';
import { AssistantLineSchema } from '../../lib/harness/trajectory/trajectory-schema.ts';
import { judgeDecisions } from '../../lib/training/decisions/judge-decisions.ts';
import { locateDecision } from '../../lib/training/decisions/locate-decision.ts';
import { personDecisions } from '../../lib/training/decisions/person-decisions.ts';
import { reply, startScriptedModelServer, type ScriptedModelServer } from '../support/scripted-model-server.ts';
import { handTrajectory, realAgentTrajectory } from './decisions-support.ts';

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('harness events', () => {
  it('a real attempt: an unknown tool gives the real tool list, bad arguments give the schema and what was wrong', { timeout: 30_000 }, async () => {
    const trajectory = await realAgentTrajectory('run-1.calc__add.strict.0');
    const { candidates, skipped } = harnessEventDecisions(trajectory);
    expect(skipped).toEqual([]);
    expect(candidates.map((c) => [c.hintClass, c.messageId])).toEqual([
      ['available-tools', 'run-1.calc__add.strict.0:m1'],
      ['tool-arguments', 'run-1.calc__add.strict.0:m2'],
      ['tool-arguments', 'run-1.calc__add.strict.0:m3'],
    ]);
    const [unknown, badArgs, badJson] = candidates;
    expect(unknown!.hint.by).toBe('rule');
    expect(unknown!.hint.text).toContain('There is no tool named "run_tests"');
    // Every real tool, with its one-line description; never the one that does not exist as if it did.
    for (const t of trajectory.header.tools) expect(unknown!.hint.text).toContain(`- ${t.name}: ${t.description.split('\n')[0]!.trim()}`);
    expect(unknown!.hint.text.match(/^- run_tests/m)).toBeNull();
    expect(unknown!.source).toEqual({ kind: 'harness-event', eventKind: 'tool.unknown', eventSeq: expect.any(Number) });
    // The event's span (the call's arguments) is the record's character span; no token span without token ids.
    const call = trajectory.steps.find((s) => s.type === 'assistant' && s.messageId === unknown!.messageId);
    expect(call?.type === 'assistant' && call.toolCalls[0]).toBeTruthy();
    const toolCall = call?.type === 'assistant' ? call.toolCalls[0]! : undefined;
    expect(unknown!.charSpan).toEqual({ field: 'arguments', toolCallId: toolCall!.id, start: 0, end: toolCall!.arguments.length });
    expect(unknown!.tokenSpan).toBeUndefined();
    const readFile = trajectory.header.tools.find((t) => t.name === 'read_file')!;
    expect(badArgs!.hint.text).toContain(JSON.stringify(readFile.parameters));
    expect(badArgs!.hint.text).toMatch(/What was wrong: .*path/);
    expect(badJson!.hint.text).toContain('not valid JSON');
  });

  it('a tool removed during the episode: the hint lists the tools that are left', () => {
    const t = handTrajectory('a2', [
      { assistant: 'posting', calls: [{ id: 'c1', name: 'chat_post', arguments: '{"text":"hi"}' }] },
      { result: 'posted', toolCallId: 'c1', name: 'chat_post' },
      { event: 'tool.removed', detail: { tool: 'chat_post', tools: ['bash', 'read_file', 'submit'] } },
      { assistant: 'posting again', calls: [{ id: 'c2', name: 'chat_post', arguments: '{"text":"again"}' }] },
      { event: 'tool.unavailable', detail: { tool: 'chat_post' }, toolCallId: 'c2' },
      { result: 'Error: no longer available', toolCallId: 'c2', name: 'chat_post', isError: true },
    ]);
    const { candidates } = harnessEventDecisions(t);
    expect(candidates).toHaveLength(1);
    expect(candidates[0]).toMatchObject({ hintClass: 'tool-unavailable', messageId: 'a2:m2', turn: 2, charSpan: { field: 'arguments', toolCallId: 'c2', start: 0, end: 10 } });
    expect(candidates[0]!.hint.text).toContain('"chat_post" is no longer available');
    expect(candidates[0]!.hint.text).toContain('- bash: Run a shell command in the workspace.');
    expect(candidates[0]!.hint.text).not.toContain('- chat_post');
  });

  it('blocked network and history: trajectory events, and sandbox observations placed on the call that ran then', () => {
    const t = handTrajectory('a3', [
      { assistant: 'fetch it', calls: [{ id: 'c1', name: 'bash', arguments: '{"command":"curl https://pypi.org/x"}' }] },
      { result: 'blocked', toolCallId: 'c1', name: 'bash', startMs: 2000, durationMs: 500 },
      { assistant: 'look at history', calls: [{ id: 'c2', name: 'bash', arguments: '{"command":"git log -p"}' }] },
      { event: 'git.history-needed', detail: { argv: ['git', 'log', '-p'] }, toolCallId: 'c2' },
      { result: 'no history', toolCallId: 'c2', name: 'bash' },
    ]);
    const observations = [
      { kind: 'network.blocked' as const, at: '2026-12-03T10:00:02.200Z', detail: { host: 'pypi.org', port: 443 } },
      // Inside no call's window: left out.
      { kind: 'network.blocked' as const, at: '2026-12-03T11:00:00.000Z', detail: { host: 'example.com' } },
    ];
    const { candidates } = harnessEventDecisions(t, { observations });
    expect(candidates.map((c) => [c.hintClass, c.messageId, c.source.kind === 'harness-event' && c.source.eventKind])).toEqual([
      ['sandbox-rules', 'a3:m2', 'git.history-needed'],
      ['sandbox-rules', 'a3:m1', 'network.blocked'],
    ]);
    expect(candidates[0]!.hint.text).toContain('`git log -p` cannot see earlier commits');
    expect(candidates[1]!.hint.text).toContain('pypi.org cannot be reached');
    expect(candidates[1]!.charSpan).toMatchObject({ toolCallId: 'c1', start: 0, end: '{"command":"curl https://pypi.org/x"}'.length });
  });

  it('an event naming no assistant message is skipped with the reason', () => {
    const t = handTrajectory('a4', [{ user: 'hello' }]);
    const withEvent = { ...t, steps: [...t.steps, { type: 'event' as const, seq: 99, at: '2026-12-03T10:00:00Z', kind: 'tool.unknown', messageId: 'a4:m9', message: 'x', detail: { tool: 'nope' } }] };
    const { candidates, skipped } = harnessEventDecisions(withEvent);
    expect(candidates).toEqual([]);
    expect(skipped).toEqual([{ source: 'harness-event', ref: 'tool.unknown@99', reason: 'no assistant message a4:m9 in the trajectory' }]);
  });
});

const judgementOf = (quote: string, source: 'trajectory' | 'final-message' = 'trajectory'): Judgement => ({
  judge: { name: 'rubric', version: 'v1' },
  criteria: [
    { id: 'c1', verdict: 'fail', score: 0, reason: 'It edited before reading.', evidence: [{ source, quote }] },
    { id: 'c2', verdict: 'pass', score: 1, reason: 'fine', evidence: [] },
  ],
  score: 0.5,
  calls: 1,
  usage: { promptTokens: 1, completionTokens: 1 },
  latencyMs: 1,
  complete: true,
});

describe('a judge', () => {
  const t = handTrajectory('j1', [
    { assistant: 'I will overwrite src/add.js without reading it', calls: [{ id: 'c1', name: 'bash', arguments: '{"command":"echo x > src/add.js"}' }] },
    { result: 'ok', toolCallId: 'c1', name: 'bash' },
    { assistant: 'Running the tests now', calls: [{ id: 'c2', name: 'bash', arguments: '{"command":"npm test"}' }] },
    { result: 'ok', toolCallId: 'c2', name: 'bash' },
    { assistant: 'Running the tests now', calls: [{ id: 'c3', name: 'submit', arguments: '{"answer":"done"}' }] },
  ]);

  it('a failed criterion whose quote is in one assistant message: the criterion is the hint', () => {
    const { candidates, skipped } = judgeDecisions(t, judgementOf('[assistant] I will overwrite src/add.js\n│ without reading it'), { c1: 'The agent reads the code before it edits it.' });
    expect(skipped).toEqual([]);
    expect(candidates).toHaveLength(1);
    expect(candidates[0]).toMatchObject({
      messageId: 'j1:m1',
      hintClass: 'judge-criterion',
      hint: { text: 'The agent reads the code before it edits it.\n(It edited before reading.)', by: 'model', model: 'rubric@v1' },
      source: { kind: 'judge', judge: 'rubric@v1', criterion: 'c1' },
    });
    // A quote from a tool call's arguments spans those characters.
    const args = judgeDecisions(t, judgementOf('[tool call] bash {"command":"echo x > src/add.js"}'));
    expect(args.candidates[0]).toMatchObject({ messageId: 'j1:m1', charSpan: { field: 'arguments', toolCallId: 'c1' } });
  });

  it('a quote in two assistant messages, or in none, gives no record and says why', () => {
    const two = judgeDecisions(t, judgementOf('Running the tests now', 'final-message'));
    expect(two.candidates).toEqual([]);
    expect(two.skipped).toEqual([{ source: 'judge', ref: 'rubric@v1:c1', reason: 'the quote is in 2 assistant messages' }]);
    const none = judgeDecisions(t, judgementOf('words the agent never wrote'));
    expect(none.skipped[0]!.reason).toBe('the quote is in no assistant message');
  });
});

describe('a person', () => {
  const t = handTrajectory('p1', [
    { assistant: 'deleting the tests', calls: [{ id: 'c1', name: 'bash', arguments: '{"command":"rm -r test"}' }] },
    { result: 'ok', toolCallId: 'c1', name: 'bash' },
  ]);
  const event = { eventId: 'fb-1', kind: 'rating' as const, rating: 'down' as const, messageId: 'p1:m1', comment: 'Never delete tests; fix the code.', trajectory: { blobKey: 'trajectories/feedback/fb-1.json' }, trainingConsent: true, reporter: 'ana' };

  it('a thumbs-down with a comment on a message: the comment is the hint; nothing identifies the person', () => {
    const { candidates } = personDecisions(t, event);
    expect(candidates).toEqual([{ messageId: 'p1:m1', turn: 1, hintClass: 'person-comment', hint: { text: 'Never delete tests; fix the code.', by: 'person' }, source: { kind: 'person', feedbackEventId: 'fb-1' } }]);
    expect(JSON.stringify(candidates)).not.toContain('ana');
  });

  it('no consent, a thumbs-up, no messageId, or a message that is not the assistant’s: no record, and why', () => {
    expect(personDecisions(t, { ...event, trainingConsent: false }).skipped[0]!.reason).toMatch(/no training consent/);
    expect(personDecisions(t, { ...event, rating: 'up' }).skipped[0]!.reason).toMatch(/thumbs-up/);
    expect(personDecisions(t, { ...event, messageId: undefined }).skipped[0]!.reason).toMatch(/no messageId/);
    expect(personDecisions(t, { ...event, messageId: 'p1:m7' }).skipped[0]!.reason).toMatch(/not an assistant message/);
  });
});

describe('a locator model over the scripted model server', () => {
  const t = handTrajectory('l1', [
    { user: 'make add() add' },
    { assistant: 'I will call a tool', calls: [{ id: 'c1', name: 'bash', arguments: '{"command":"pip install calc"}' }] },
    { result: 'network blocked', toolCallId: 'c1', name: 'bash', isError: true },
    { assistant: 'giving up', calls: [{ id: 'c2', name: 'submit', arguments: '{}' }] },
  ]);

  it('names the first wrong message and a hint: one record, by the model', async () => {
    server = await startScriptedModelServer([reply.text('{"messageId": "l1:m1", "hint": "Edit src/add.js instead of installing packages.", "reason": "installing cannot work offline"}')]);
    const model = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'locator' });
    const { candidates, skipped } = await locateDecision(model, t, 'l1');
    expect(skipped).toEqual([]);
    expect(candidates).toEqual([
      { messageId: 'l1:m1', turn: 1, hintClass: 'model-located', hint: { text: 'Edit src/add.js instead of installing packages.', by: 'model', model: model.id }, source: { kind: 'locator-model', model: model.id, reason: 'installing cannot work offline' } },
    ]);
    // The model saw each assistant message under its id.
    const prompt = JSON.stringify(server.chatRequests()[0]!.body['messages']);
    expect(prompt).toContain('[assistant messageId=l1:m1]');
    expect(prompt).toContain('[assistant messageId=l1:m2]');
  });

  it('an unknown messageId, a user message, or prose: no record, and the reason', async () => {
    server = await startScriptedModelServer([
      reply.text('{"messageId": "l1:m9", "hint": "x", "reason": "y"}'),
      reply.text('{"messageId": "l1:u1", "hint": "x", "reason": "y"}'),
      reply.text('The first wrong decision is the pip install.'),
      reply.text('{"messageId": "l1:m1"}'),
    ]);
    const model = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'locator' });
    const reasons: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await locateDecision(model, t, 'l1');
      expect(r.candidates).toEqual([]);
      reasons.push(r.skipped[0]!.reason);
    }
    expect(reasons[0]).toMatch(/named "l1:m9", which is not an assistant message/);
    expect(reasons[1]).toMatch(/named "l1:u1", which is not an assistant message/);
    expect(reasons[2]).toMatch(/did not answer JSON/);
    expect(reasons[3]).toMatch(/hint/);
  });
});

describe('token spans', () => {
  // A byte-level tokenizer: ids 0–255 are bytes; 256+ are special tokens, and 300 is a two-character token.
  const decode = (id: number) => (id < 256 ? String.fromCharCode(id) : id === 300 ? 'ue' : '<|end|>');
  const bytes = (s: string) => [...Buffer.from(s, 'latin1')];
  const message = (completion: number[], args: string) =>
    AssistantLineSchema.parse({ type: 'assistant', seq: 1, at: '2026-12-03T10:00:00Z', messageId: 'x:m1', turn: 1, content: '', toolCalls: [{ id: 'c1', name: 'run_tests', arguments: args }], finishReason: 'tool_calls', model: 'tiny', usage: { promptTokens: 1, completionTokens: completion.length }, tokens: { completionTokenIds: completion }, timing: { startedAt: '2026-12-03T10:00:00Z', durationMs: 1, httpAttempts: 1 } });

  it('exact when the sampled tokens hold the decision once, on token boundaries', () => {
    const args = '{"all": true}';
    const text = `<tool_call>{"name": "run_tests", "arguments": ${args}}</tool_call>`;
    const ids = [...bytes(text), 256];
    const span = exactTokenSpan(message(ids, args), { field: 'arguments', toolCallId: 'c1', start: 0, end: args.length }, decode);
    const at = text.indexOf(args);
    expect(span).toEqual({ start: at, end: at + args.length });
    expect(ids.slice(span!.start, span!.end).map(decode).join('')).toBe(args);
    // The tool's name too (the tool that does not exist).
    const name = exactTokenSpan(message(ids, args), { field: 'tool-name', toolCallId: 'c1', start: 0, end: 'run_tests'.length }, decode);
    expect(ids.slice(name!.start, name!.end).map(decode).join('')).toBe('run_tests');
  });

  it('absent when the decision occurs twice, straddles a token, or there are no token ids', () => {
    const args = '{"a": 1}';
    expect(exactTokenSpan(message(bytes(`${args} ${args}`), args), { field: 'arguments', toolCallId: 'c1', start: 0, end: args.length }, decode)).toBeUndefined();
    // `true` sampled as t, r, "ue": the span [0, 3) = "tru" ends inside a token.
    expect(exactTokenSpan(message([...bytes('{"x": tr'), 300, ...bytes('}')], 'true'), { field: 'arguments', toolCallId: 'c1', start: 0, end: 3 }, decode)).toBeUndefined();
    expect(exactTokenSpan(message([], args), { field: 'arguments', toolCallId: 'c1', start: 0, end: 3 }, decode)).toBeUndefined();
  });
});
