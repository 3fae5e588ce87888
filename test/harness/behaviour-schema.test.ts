import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../lib/errors.ts';
import { parseTaskBehaviour } from '../../lib/harness/task/behaviour-schema.ts';
import { parseTask } from '../../lib/harness/task/task-schema.ts';

function issues(input: unknown): string[] {
  try {
    parseTaskBehaviour(input);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).issues.map((i) => `${i.path}: ${i.message}`);
  }
  throw new Error('expected a ValidationError');
}

describe('task behaviour schema', () => {
  it('accepts a full case and fills defaults', () => {
    const b = parseTaskBehaviour({
      userTurns: [{ afterTurn: 2, text: 'stop' }, { on: 'service-call', service: 'chat', calledTool: 'chat_post', occurrence: 2, text: 'thanks' }],
      simulatedUser: { persona: 'p', goal: 'g' },
      tools: { define: [{ name: 'deploy_status', description: 'd', respond: 'green' }], changes: [{ tool: 'deploy_status', change: 'add', afterTurn: 3 }] },
      services: { chat: { channels: [{ name: 'eng' }] }, incidents: { incidents: [{ id: 'INC-1', title: 't', openedAt: '2026-12-03T10:00:00Z' }] } },
    });
    expect(b.simulatedUser).toMatchObject({ maxTurns: 5, stopPhrase: '[DONE]', temperature: 0 });
    expect(b.services?.chat).toMatchObject({ me: 'flywheel-agent', channels: [{ name: 'eng', messages: [] }], replies: [] });
    expect(b.services?.incidents?.incidents[0]).toMatchObject({ status: 'open', severity: 'sev3', notes: [] });
    expect(parseTaskBehaviour({}).userTurns).toEqual([]);
  });

  it('names each offending field', () => {
    expect(issues({ userTurns: [{ text: 'x' }] })).toEqual(['behaviour.userTurns.0.on: give exactly one of afterTurn, on']);
    expect(issues({ userTurns: [{ afterTurn: 1, on: 'submit', text: 'x' }] })).toEqual(['behaviour.userTurns.0.on: give exactly one of afterTurn, on']);
    expect(issues({ userTurns: [{ afterTurn: 1, occurrence: 2, text: 'x' }] })).toEqual(['behaviour.userTurns.0.occurrence: only with on (not with afterTurn)']);
    expect(issues({ userTurns: [{ on: 'submit', calledTool: 'bash', text: 'x' }] })).toEqual(['behaviour.userTurns.0.calledTool: only with on: tool-call or service-call']);
    expect(issues({ userTurns: [{ on: 'tool-call', calledTool: 'chat_post', text: 'x' }] })).toEqual(['behaviour.userTurns.0.calledTool: no tool chat_post in this task']);
    expect(issues({ userTurns: [{ on: 'service-call', service: 'incidents', text: 'x' }] })).toEqual(['behaviour.userTurns.0.service: services.incidents is not configured']);
    expect(issues({ userTurns: [{ on: 'whenever', text: 'x' }] })[0]).toMatch(/^behaviour\.userTurns\.0\.on: /);
    expect(issues({ tools: { changes: [{ tool: 'teleport', change: 'add', afterTurn: 1 }] } })).toEqual(['behaviour.tools.changes.0.tool: no tool teleport (built-in, ask_user, a configured service\'s, or tools.define)']);
    expect(issues({ tools: { changes: [{ tool: 'submit', change: 'remove', afterTurn: 1 }] } })).toEqual(['behaviour.tools.changes.0.tool: submit is always offered']);
    expect(issues({ tools: { define: [{ name: 'bash', description: 'd', respond: 'x' }] } })).toEqual(['behaviour.tools.define.0.name: bash is already a tool\'s name']);
    expect(issues({ tools: { define: [{ name: 'x', description: 'd' }] } })).toEqual(['behaviour.tools.define.0.command: give exactly one of command, respond']);
    expect(issues({ simulatedUser: { persona: 'p' } })).toEqual(['behaviour.simulatedUser.goal: Invalid input: expected string, received undefined']);
    expect(issues({ services: { chat: { channels: [{ name: 'eng' }, { name: 'eng' }], replies: [{ channel: 'ops', user: 'a', text: 't' }] } } })).toEqual([
      'behaviour.services.chat.channels.1.name: channel eng is named twice',
      'behaviour.services.chat.replies.0.channel: no channel ops',
    ]);
    // `match` is plain text (or keywords), never a regular expression: '(' is just a character; empty is refused.
    expect(parseTaskBehaviour({ services: { chat: { channels: [{ name: 'eng' }], replies: [{ channel: 'eng', match: '(', user: 'a', text: 't' }] } } }).services?.chat?.replies[0]?.match).toBe('(');
    expect(issues({ services: { chat: { channels: [{ name: 'eng' }], replies: [{ channel: 'eng', match: [], user: 'a', text: 't' }] } } })[0]).toMatch(/^behaviour\.services\.chat\.replies\.0\.match: /);
    expect(issues({ services: { chat: { channels: [{ name: 'eng' }], replies: [{ channel: 'eng', match: '', user: 'a', text: 't' }] } } })[0]).toMatch(/^behaviour\.services\.chat\.replies\.0\.match: /);
    expect(issues({ services: { incidents: { metrics: [{ name: 'm', points: [{ at: 'yesterday', value: 1 }] }] } } })[0]).toMatch(/^behaviour\.services\.incidents\.metrics\.0\.points\.0\.at: an ISO 8601/);
    expect(issues({ surprise: 1 })[0]).toMatch(/^behaviour: .*surprise/);
  });

  it('bounds sizes', () => {
    expect(issues({ userTurns: Array.from({ length: 51 }, () => ({ afterTurn: 1, text: 'x' })) })[0]).toMatch(/^behaviour\.userTurns: /);
    expect(issues({ userTurns: [{ afterTurn: 1, text: 'x'.repeat(8001) }] })[0]).toMatch(/^behaviour\.userTurns\.0\.text: /);
    expect(issues({ simulatedUser: { persona: 'p', goal: 'g', maxTurns: 51 } })[0]).toMatch(/^behaviour\.simulatedUser\.maxTurns: /);
    expect(issues({ services: { chat: { channels: [] } } })[0]).toMatch(/^behaviour\.services\.chat\.channels: /);
    expect(issues({ services: { chat: { channels: [{ name: 'eng', messages: Array.from({ length: 501 }, () => ({ user: 'a', text: 't' })) }] } } })[0]).toMatch(/channels\.0\.messages: /);
  });

  it('a task carries its behaviour, and a bad one is named under behaviour', () => {
    const base = { schemaVersion: 1, id: 'b/1', suite: 'b', split: 'held-out', visibility: 'private', repo: { kind: 'local', path: '.' }, instruction: 'i', testCommand: 'true', failToPass: [] };
    expect(parseTask({ ...base, behaviour: { userTurns: [{ on: 'submit', text: 'more' }] } }).behaviour?.userTurns).toHaveLength(1);
    expect(() => parseTask({ ...base, behaviour: { userTurns: [{ text: 'x' }] } })).toThrow(/behaviour\.userTurns\.0\.on: give exactly one of afterTurn, on/);
  });
});
