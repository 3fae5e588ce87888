import { rm } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findCandidates } from '../../../lib/forge/candidates/find-candidates.ts';
import type { Candidate } from '../../../lib/forge/candidate.ts';
import { findLeaks, normalizeLine, removedCodeLines } from '../../../lib/forge/statement/find-leaks.ts';
import { writeTaskStatement } from '../../../lib/forge/statement/write-task-statement.ts';
import { openAiCompatibleModel } from '../../../lib/models/openai-compatible.ts';
import { reply, startScriptedModelServer, type ScriptStep, type ScriptedModelServer } from '../../support/scripted-model-server.ts';
import { PY_REPO, TS_REPO, writeRepo } from '../candidates/fixture-repos.ts';

const repos: string[] = [];
let ts: Candidate[];
let py: Candidate[];
let server: ScriptedModelServer | undefined;

beforeAll(async () => {
  const tsRepo = await writeRepo(TS_REPO);
  const pyRepo = await writeRepo(PY_REPO);
  repos.push(tsRepo, pyRepo);
  ts = await findCandidates(tsRepo);
  py = await findCandidates(pyRepo);
});
afterAll(async () => {
  for (const r of repos) await rm(r, { recursive: true, force: true });
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function scripted(steps: ScriptStep[]) {
  server = await startScriptedModelServer(steps);
  return openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'scripted-writer', retry: { baseDelayMs: 1, maxAttempts: 1 } });
}

const pick = (list: Candidate[], strategy: string, symbol: string) => list.find((c) => c.strategy === strategy && c.symbols.includes(symbol))!;

/**
 * True when a non-trivial removed line of the candidate's implementation appears in the text. Signature and doc
 * lines are the interface the agent is told about (a whole-file removal removes them too), so they do not count.
 */
const carriesRemovedCode = (text: string, c: Candidate) => {
  const visible = normalizeLine([...c.context.signatures, ...c.context.docComments].join('\n'));
  return removedCodeLines(c).some((l) => !visible.includes(l) && normalizeLine(text).includes(l));
};

describe('writeTaskStatement', () => {
  it('uses the template without a model: signatures, docs and failing tests, no removed code', async () => {
    const c = pick(ts, 'function-body', 'src/calc.ts#add');
    const { statement, source, rejected } = await writeTaskStatement(c, { failingTests: ['test/calc.test.ts > adds'] });
    expect(source).toBe('template');
    expect(rejected).toEqual([]);
    expect(statement).toContain('The body of `add` in `src/calc.ts` has been replaced by a "not implemented" error');
    expect(statement).toContain('export function add(a: number, b: number): number');
    expect(statement).toContain('/** Adds two numbers, rounded to cents. */');
    expect(statement).toContain('- test/calc.test.ts > adds');
    expect(removedCodeLines(c)).toContain('const sum = a + b;');
    expect(carriesRemovedCode(statement, c)).toBe(false);
    for (const candidate of [...ts, ...py]) {
      const t = await writeTaskStatement(candidate, { failingTests: ['t'] });
      expect(carriesRemovedCode(t.statement, candidate), candidate.id).toBe(false);
    }
  });

  it('rejects model drafts that quote the removed code and falls back to the template', async () => {
    const c = pick(ts, 'function-body', 'src/calc.ts#add');
    const model = await scripted([
      reply.text('Implement add. Hint:\n```ts\n    const sum = a + b;\n    return round(sum);\n```'),
      reply.text('Implement `add` so that it computes `const  sum = a +   b;` then rounds.'),
    ]);
    const result = await writeTaskStatement(c, { failingTests: [{ id: 'test/calc.test.ts > adds', body: 'expect(add(1, 2)).toBe(3);' }], model });
    expect(result.source).toBe('template');
    expect(result.rejected).toHaveLength(2);
    expect(result.rejected[0]!.reason).toMatch(/^leak: the text contains a line of the removed code: "const sum = a \+ b;"/);
    expect(result.rejected[1]!.reason).toContain('const sum = a + b;');
    expect(carriesRemovedCode(result.statement, c)).toBe(false);
    // The prompts never carried the removed body, retries included.
    const requests = server!.chatRequests();
    expect(requests).toHaveLength(2);
    for (const r of requests) expect(carriesRemovedCode(JSON.stringify((r.body as { messages: unknown }).messages).replace(/\\n/g, '\n'), c)).toBe(false);
    expect(JSON.stringify(requests[0]!.body)).toContain('export function add(a: number, b: number): number');
    expect(JSON.stringify(requests[0]!.body)).toContain('expect(add(1, 2)).toBe(3);');
  });

  it('keeps a clean model draft, after a rejected one', async () => {
    const c = pick(py, 'class', 'pkg/shapes.py#Circle');
    const clean = 'Rebuild the `Circle` dataclass in `pkg/shapes.py`: a circle of radius `r` whose `diameter` property is twice the radius.';
    const model = await scripted([reply.text('Like this: `return 2 * self.r` in diameter.'), reply.text(clean)]);
    const result = await writeTaskStatement(c, { failingTests: ['tests/test_shapes.py::test_circle'], model });
    expect(result).toMatchObject({ source: 'model', statement: clean, model: 'openai:scripted-writer@' + server!.baseUrl });
    expect(result.rejected).toEqual([{ attempt: 1, reason: 'leak: the text contains a line of the removed code: "return 2 * self.r"' }]);
  });

  it('falls back to the template when the model endpoint refuses, with the reason', async () => {
    const c = pick(ts, 'file', 'src/util.ts');
    const model = await scripted([reply.error(400)]);
    const result = await writeTaskStatement(c, { failingTests: ['t1'], model });
    expect(result.source).toBe('template');
    expect(result.rejected[0]!.reason).toMatch(/^model error: Flywheel\.ModelRequestError/);
    expect(result.statement).toContain('The module `src/util.ts` has been deleted, and its imports were removed from `src/calc.ts`, `src/main.ts`.');
  });
});

describe('findLeaks', () => {
  const candidate = {
    edits: [{ path: 'a.py', original: 'def f(x):\n    if x:\n        return compute_total(x, 2)\n    return 0\n', content: 'def f(x):\n    raise NotImplementedError\n' }],
  };

  it('finds removed lines whatever the whitespace, ignoring trivial ones and allowed text', () => {
    expect(removedCodeLines(candidate)).toEqual(['return compute_total(x, 2)']);
    expect(findLeaks('call compute_total(x, 3) ok', candidate)).toEqual([]);
    expect(findLeaks('call\n   return   compute_total(x, 2)\n', candidate).map((l) => l.line)).toEqual(['return compute_total(x, 2)']);
    expect(findLeaks('if x: return 0', candidate)).toEqual([]);
    expect(findLeaks('return compute_total(x, 2)', candidate, { allowed: ['assert f(1) == return compute_total(x, 2)'] })).toEqual([]);
  });
});
