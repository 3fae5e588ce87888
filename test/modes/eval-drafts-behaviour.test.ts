/**
 * Eval drafts with a behaviour: the drafter (scripted model server over HTTP) may give a case user turns, tools and
 * services; the behaviour is validated against the task's schema (a bad one goes back to the drafter naming the
 * field), stored on the draft through its codec, and offered to the drafter as a JSON Schema.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { feedbackKeys } from '../../lib/feedback/record-keys.ts';
import { openAiCompatibleModel } from '../../lib/models/openai-compatible.ts';
import { DRAFT_TOOL, draftEvalCase, listEvalDrafts } from '../../lib/modes/evals/eval-drafts.ts';
import type { LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { reply, startScriptedModelServer, type ScriptedModelServer } from '../support/scripted-model-server.ts';
import { tempPorts } from './support/modes-fixture.ts';

let env: { ports: LocalPorts; cleanup: () => void } | undefined;
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  env?.cleanup();
});

const CASE = {
  instruction: 'Fix the flaky date test, then tell the team in #eng.',
  context: '',
  rubric: [{ criterion: 'Posts a short summary in #eng after the fix' }],
  checks: [],
};

describe('eval drafts with a behaviour', () => {
  it('a behaviour the schema refuses goes back to the drafter naming the field; a valid one is stored on the draft', async () => {
    env = tempPorts();
    const behaviour = {
      userTurns: [{ on: 'submit', text: 'Did you post in #eng?' }],
      services: { chat: { channels: [{ name: 'eng', messages: [{ user: 'ana', text: 'Ping here when the flaky test is fixed.' }] }] } },
    };
    server = await startScriptedModelServer([reply.tool(DRAFT_TOOL, { ...CASE, behaviour: { userTurns: [{ text: 'no trigger' }] } }), reply.tool(DRAFT_TOOL, { ...CASE, behaviour })]);
    const model = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'drafter' });
    await env.ports.records.put({
      ...feedbackKeys.report('r-9'),
      reportId: 'r-9',
      title: 'Never reports back',
      body: 'It fixed the test but never told anyone in the channel, as asked.',
      severity: 'low',
      reporter: 'qa',
      source: 'internal',
      links: [],
      model: 'ckpt-a',
      trainingConsent: true,
      receivedAt: new Date().toISOString(),
    });
    const draft = await draftEvalCase(env.ports, model, { fromReport: 'r-9' });
    const tools = server.chatRequests()[0]!.body['tools'] as Array<{ function: { parameters: { properties: Record<string, { properties?: Record<string, unknown> }> } } }>;
    expect(Object.keys(tools[0]!.function.parameters.properties['behaviour']!.properties!)).toEqual(['userTurns', 'simulatedUser', 'tools', 'services']);
    const retry = server.chatRequests()[1]!.body['messages'] as Array<{ role: string; content: string }>;
    expect(retry.at(-1)!.content).toMatch(/Refused: behaviour\.userTurns\.0\.on: give exactly one of afterTurn, on/);
    expect(draft.behaviour).toMatchObject({ userTurns: [{ on: 'submit', text: 'Did you post in #eng?' }], services: { chat: { me: 'flywheel-agent', channels: [{ name: 'eng' }] } } });
    const [stored] = (await listEvalDrafts(env.ports, {})).items;
    expect(stored!.behaviour).toEqual(draft.behaviour);
  });
});
