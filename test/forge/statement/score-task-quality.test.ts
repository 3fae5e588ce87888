import { rm } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findCandidates } from '../../../lib/forge/candidates/find-candidates.ts';
import type { Candidate } from '../../../lib/forge/candidate.ts';
import { scoreTaskQuality } from '../../../lib/forge/statement/score-task-quality.ts';
import { openAiCompatibleModel } from '../../../lib/models/openai-compatible.ts';
import { reply, startScriptedModelServer, type ScriptStep, type ScriptedModelServer } from '../../support/scripted-model-server.ts';
import { TS_REPO, writeRepo } from '../candidates/fixture-repos.ts';

let repo: string;
let candidate: Candidate;
let server: ScriptedModelServer | undefined;

beforeAll(async () => {
  repo = await writeRepo(TS_REPO);
  candidate = (await findCandidates(repo, { strategies: ['function-body'] })).find((c) => c.symbols.includes('src/calc.ts#add'))!;
});
afterAll(async () => {
  await rm(repo, { recursive: true, force: true });
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function scripted(steps: ScriptStep[]) {
  server = await startScriptedModelServer(steps);
  return openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'judge', retry: { baseDelayMs: 1, maxAttempts: 1 } });
}

const statement = 'Implement `add(a, b)` in `src/calc.ts`: the sum rounded to cents.';

describe('scoreTaskQuality', () => {
  it('returns null with the reason when no model is configured', async () => {
    expect(await scoreTaskQuality(candidate, { statement, failingTests: ['t'] })).toEqual({ score: null, reason: 'no model configured' });
  });

  it('takes the scores from a submit_scores tool call', async () => {
    const model = await scripted([reply.tool('submit_scores', { solvableFromVisible: 5, coherentFeature: 4, reason: 'Clear signature and tests.' })]);
    const result = await scoreTaskQuality(candidate, { statement, failingTests: [{ id: 'adds', body: 'expect(add(1, 2)).toBe(3)' }], model });
    expect(result).toEqual({ score: { solvableFromVisible: 5, coherentFeature: 4, reason: 'Clear signature and tests.' }, model: model.id });
    const body = server!.chatRequests()[0]!.body as { messages: Array<{ content: string }>; tools: Array<{ function: { name: string } }> };
    expect(body.tools[0]!.function.name).toBe('submit_scores');
    expect(body.messages[1]!.content).toContain(statement);
  });

  it('asks again after a malformed answer and accepts JSON in the text', async () => {
    const model = await scripted([reply.text('I think it is fine.'), reply.text('```json\n{"solvableFromVisible": 2, "coherentFeature": 3, "reason": "Docs are thin."}\n```')]);
    const result = await scoreTaskQuality(candidate, { statement, failingTests: ['adds'], model });
    expect(result).toEqual({ score: { solvableFromVisible: 2, coherentFeature: 3, reason: 'Docs are thin.' }, model: model.id });
  });

  it('gives null with the reason when the scores stay invalid', async () => {
    const model = await scripted([reply.text('{"solvableFromVisible": 9, "coherentFeature": 3, "reason": "x"}'), reply.text('{"solvableFromVisible": 0}')]);
    const result = await scoreTaskQuality(candidate, { statement, failingTests: ['adds'], model });
    expect(result.score).toBeNull();
    expect('reason' in result && result.reason).toMatch(/^no valid scores from the model: invalid scores: solvableFromVisible/);
  });
});
