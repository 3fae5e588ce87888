import { rm } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findCandidates } from '../../../lib/forge/candidates/find-candidates.ts';
import type { Candidate } from '../../../lib/forge/candidate.ts';
import { scoreTaskQuality } from '../../../lib/forge/statement/score-task-quality.ts';
import { templateStatement } from '../../../lib/forge/statement/template-statement.ts';
import { openAiCompatibleModel } from '../../../lib/models/openai-compatible.ts';
import { reply, startScriptedModelServer, type ScriptStep, type ScriptedModelServer } from '../../support/scripted-model-server.ts';
import { TS_REPO, writeRepo } from '../candidates/fixture-repos.ts';
import { PY_SRC_REPO, PY_SRC_TESTS } from './statement-fixtures.ts';

let repo: string;
let pyRepo: string;
let candidate: Candidate;
let formatFilename: Candidate;
let server: ScriptedModelServer | undefined;

beforeAll(async () => {
  repo = await writeRepo(TS_REPO);
  pyRepo = await writeRepo(PY_SRC_REPO);
  candidate = (await findCandidates(repo, { strategies: ['function-body'] })).find((c) => c.symbols.includes('src/calc.ts#add'))!;
  formatFilename = (await findCandidates(pyRepo, { strategies: ['function-group'] })).find((c) => c.symbols.includes('src/textkit/paths.py#format_filename'))!;
});
afterAll(async () => {
  await rm(repo, { recursive: true, force: true });
  await rm(pyRepo, { recursive: true, force: true });
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

describe('scoreTaskQuality without a model: leakage and clarity', () => {
  const leaky = [
    'The function `format_filename` in `src/textkit/paths.py` has been reduced to a stub.',
    'It used to call `_shorten` and end with `return _shorten(base_name, limit)`; for "/var/log/syslog" it should give "syslog".',
  ].join(' ');
  const clean = [
    'format_filename cannot shorten long names',
    '',
    'I call `format_filename` with `shorten=True` to show file names in a narrow column. I expect the base name of the path, shortened around an ellipsis when it is longer than the limit; instead the call fails.',
  ].join('\n');

  it('measures the share of hidden items a leaky text carries, with the list, and marks its wording down', async () => {
    const q = await scoreTaskQuality(formatFilename, { statement: leaky, failingTests: PY_SRC_TESTS, repoDir: pyRepo });
    expect(q.leaked).toEqual([
      { kind: 'line', text: 'return _shorten(base_name, limit)' },
      { kind: 'name', text: '_shorten' },
      { kind: 'name', text: 'base_name' },
      { kind: 'literal', text: '/var/log/syslog' },
      { kind: 'literal', text: 'syslog' },
    ]);
    // 8 removed lines, 2 removed-only names, 4 asserted literals.
    expect(q.hiddenItems).toBe(14);
    expect(q.leakage).toBe(0.357);
    expect(q.clarity).toBe(4);
    expect(q.clarityNotes).toEqual(['describes the edit, not the behaviour (stub, reduced to, src/textkit/paths.py)']);
    // Neither recorded by the writer nor given: without a model, the statement can only be a template.
    expect(q).toMatchObject({ clarityBy: 'heuristic', source: 'template', rewrites: 0, score: null, reason: 'no model configured' });
  });

  it('gives a clean issue no leakage and full clarity, and a bare one-liner low clarity', async () => {
    const q = await scoreTaskQuality(formatFilename, { statement: clean, failingTests: PY_SRC_TESTS, repoDir: pyRepo, written: { source: 'model', rewrites: 1 } });
    expect(q).toMatchObject({ leakage: 0, leaked: [], hiddenItems: 14, clarity: 5, clarityNotes: [], source: 'model', rewrites: 1 });
    const bare = await scoreTaskQuality(formatFilename, { statement: 'Fix the tests.', failingTests: PY_SRC_TESTS });
    expect(bare.clarity).toBe(2);
    expect(bare.clarityNotes).toEqual(['does not name the entry point (format_filename)', 'states no expected behaviour', 'too short (3 words)']);
  });

  it('tells a template statement by its text when the writer did not record it', async () => {
    const statement = templateStatement(formatFilename, PY_SRC_TESTS.map((id) => ({ id })));
    const q = await scoreTaskQuality(formatFilename, { statement, failingTests: PY_SRC_TESTS });
    expect(q).toMatchObject({ source: 'template', rewrites: 0, leakage: 0, clarity: 5 });
  });
});

describe('scoreTaskQuality with a model: the rubric', () => {
  it("takes the scores from a submit_scores tool call; the model's clarity replaces the heuristic one", async () => {
    const model = await scripted([reply.tool('submit_scores', { solvableFromVisible: 5, coherentFeature: 4, clarity: 3, reason: 'Clear signature and tests.' })]);
    const result = await scoreTaskQuality(candidate, { statement, failingTests: [{ id: 'adds', body: 'expect(add(1, 2)).toBe(3)' }], model });
    expect(result).toMatchObject({ score: { solvableFromVisible: 5, coherentFeature: 4, clarity: 3, reason: 'Clear signature and tests.' }, model: model.id, clarity: 3, clarityBy: 'model', leakage: 0, source: 'model', rewrites: 0 });
    const body = server!.chatRequests()[0]!.body as { messages: Array<{ content: string }>; tools: Array<{ function: { name: string; parameters: { required: string[] } } }> };
    expect(body.tools[0]!.function.name).toBe('submit_scores');
    expect(body.tools[0]!.function.parameters.required).toEqual(['solvableFromVisible', 'coherentFeature', 'clarity', 'reason']);
    expect(body.messages[1]!.content).toContain(statement);
  });

  it('asks again after a malformed answer and accepts JSON in the text; without clarity the heuristic one stays', async () => {
    const model = await scripted([reply.text('I think it is fine.'), reply.text('```json\n{"solvableFromVisible": 2, "coherentFeature": 3, "reason": "Docs are thin."}\n```')]);
    const result = await scoreTaskQuality(candidate, { statement, failingTests: ['adds'], model });
    expect(result).toMatchObject({ score: { solvableFromVisible: 2, coherentFeature: 3, reason: 'Docs are thin.' }, model: model.id, clarityBy: 'heuristic' });
    expect(result.score).not.toHaveProperty('clarity');
    // The heuristic: names `add`, states no expectation, 10 words, names the edited file.
    expect(result.clarityNotes).toEqual(['states no expected behaviour', 'too short (10 words)', 'describes the edit, not the behaviour (src/calc.ts)']);
    expect(result.clarity).toBe(2);
  });

  it('gives null with the reason when the scores stay invalid, keeping the deterministic scores', async () => {
    const model = await scripted([reply.text('{"solvableFromVisible": 9, "coherentFeature": 3, "reason": "x"}'), reply.text('{"solvableFromVisible": 0}')]);
    const result = await scoreTaskQuality(candidate, { statement, failingTests: ['adds'], model });
    expect(result.score).toBeNull();
    expect('reason' in result && result.reason).toMatch(/^no valid scores from the model: invalid scores: solvableFromVisible/);
    expect(result).toMatchObject({ leakage: 0, clarityBy: 'heuristic', source: 'model' });
  });
});
