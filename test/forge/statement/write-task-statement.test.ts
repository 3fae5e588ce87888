import { rm } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findCandidates } from '../../../lib/forge/candidates/find-candidates.ts';
import type { Candidate } from '../../../lib/forge/candidate.ts';
import { findLeaks, normalizeLine, removedCodeLines } from '../../../lib/forge/statement/find-leaks.ts';
import { scoreTaskQuality } from '../../../lib/forge/statement/score-task-quality.ts';
import { deletionWording, editedPathsNamed } from '../../../lib/forge/statement/statement-problems.ts';
import { writeTaskStatement } from '../../../lib/forge/statement/write-task-statement.ts';
import { openAiCompatibleModel } from '../../../lib/models/openai-compatible.ts';
import { reply, startScriptedModelServer, type ScriptStep, type ScriptedModelServer } from '../../support/scripted-model-server.ts';
import { PY_REPO, TS_REPO, writeRepo } from '../candidates/fixture-repos.ts';
import { PY_SRC_REPO, PY_SRC_TESTS, TS_CLASS_REPO, TS_CLASS_TESTS } from './statement-fixtures.ts';

const repos: string[] = [];
let ts: Candidate[];
let py: Candidate[];
let pySrc: Candidate[];
let tsClass: Candidate[];
let pySrcDir: string;
let tsClassDir: string;
let server: ScriptedModelServer | undefined;

beforeAll(async () => {
  const tsRepo = await writeRepo(TS_REPO);
  const pyRepo = await writeRepo(PY_REPO);
  pySrcDir = await writeRepo(PY_SRC_REPO);
  tsClassDir = await writeRepo(TS_CLASS_REPO);
  repos.push(tsRepo, pyRepo, pySrcDir, tsClassDir);
  ts = await findCandidates(tsRepo);
  py = await findCandidates(pyRepo);
  pySrc = await findCandidates(pySrcDir);
  tsClass = await findCandidates(tsClassDir);
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

const pick = (list: Candidate[], strategy: string, symbol: string) => {
  const found = list.find((c) => c.strategy === strategy && c.symbols.includes(symbol));
  if (!found) throw new Error(`no ${strategy} candidate for ${symbol} in ${list.map((c) => c.id).join(', ')}`);
  return found;
};

/**
 * True when a non-trivial removed line of the candidate's implementation appears in the text. Signature and doc
 * lines are the interface the agent is told about (a whole-file removal removes them too), so they do not count.
 */
const carriesRemovedCode = (text: string, c: Candidate) => {
  const visible = normalizeLine([...c.context.signatures, ...c.context.docComments].join('\n'));
  return removedCodeLines(c).some((l) => !visible.includes(l) && normalizeLine(text).includes(l));
};

const messagesOf = (i: number) => (server!.chatRequests()[i]!.body as { messages: Array<{ role: string; content: string }> }).messages;

describe('writeTaskStatement without a model: the behaviour, not the edit', () => {
  it('states a Python function by its entry point, docs and test names, naming no helper or edited file', async () => {
    const c = pick(pySrc, 'function-group', 'src/textkit/paths.py#format_filename');
    expect(c.symbols).toContain('src/textkit/paths.py#_shorten');
    const { statement, source, rewrites, rejected } = await writeTaskStatement(c, { failingTests: PY_SRC_TESTS, repoDir: pySrcDir });
    expect({ source, rewrites, rejected }).toEqual({ source: 'template', rewrites: 0, rejected: [] });
    expect(statement).toContain('Calling `format_filename` does not work');
    expect(statement).toContain('Its documentation says: "Formats a filename for display, shortening long ones when asked."');
    expect(statement).toContain('def format_filename(filename, shorten=False, limit=20):');
    expect(statement).toContain('- `format_filename` should shorten long paths (`tests/test_paths.py::test_shortens_long_paths`)');
    expect(statement).toContain('- `format_filename` should keep the base name (`tests/test_paths.py::test_keeps_the_base_name`)');
    expect(statement).not.toMatch(/(?<!\w)_shorten|:param|src\/textkit|paths\.py(?!::)/);
    expect(deletionWording(statement)).toEqual([]);
    expect(carriesRemovedCode(statement, c)).toBe(false);
    // The test literals stay in the tests.
    expect(statement).not.toContain('a_really_l...e_here.txt');
  });

  it('states a TypeScript class with its public members, in the words of its vitest titles', async () => {
    const c = pick(tsClass, 'class', 'src/slugger.ts#Slugger');
    const { statement, source } = await writeTaskStatement(c, { failingTests: TS_CLASS_TESTS, repoDir: tsClassDir });
    expect(source).toBe('template');
    expect(statement).toMatch(/^`Slugger` cannot be used: creating one and calling its methods fails/);
    expect(statement).toContain('```ts\nexport class Slugger\n    slug(title: string): string\n```');
    expect(statement).toContain('- "Turns titles into URL slugs, remembering the ones it gave out."');
    expect(statement).toContain('- `Slugger` should make lowercase dashed slugs (`test/slugger.test.ts > Slugger > makes lowercase dashed slugs`)');
    expect(statement).toContain('- `Slugger` should number repeated titles (`test/slugger.test.ts > Slugger > numbers repeated titles`)');
    expect(statement).not.toMatch(/\bseen\b|src\/slugger\.ts|hello-world-again|intro-1/);
    expect(deletionWording(statement)).toEqual([]);
  });

  it('never words the edit, names the edited files or carries removed code, for every fixture candidate', async () => {
    for (const candidate of [...ts, ...py, ...pySrc, ...tsClass]) {
      const t = await writeTaskStatement(candidate, { failingTests: ['tests/test_x.py::test_it_works'] });
      expect(carriesRemovedCode(t.statement, candidate), candidate.id).toBe(false);
      expect(deletionWording(t.statement), candidate.id).toEqual([]);
      expect(editedPathsNamed(t.statement, candidate), candidate.id).toEqual([]);
      expect(t.statement, candidate.id).not.toMatch(/has been|reduced to a stub|not implemented/i);
    }
  });

  it('names no private helper: a candidate with no public entry point is stated through its tests', async () => {
    const c = pick(pySrc, 'function-body', 'src/textkit/paths.py#_shorten');
    const { statement } = await writeTaskStatement(c, { failingTests: PY_SRC_TESTS });
    expect(statement).toMatch(/^Some behaviour of the library does not work/);
    expect(statement).toContain('- It should shorten long paths (`tests/test_paths.py::test_shortens_long_paths`)');
    expect(statement).not.toMatch(/(?<!\w)_shorten/);
  });
});

describe('writeTaskStatement with a model: a user issue, checked and rewritten', () => {
  const good = [
    'format_filename cannot shorten long file names',
    '',
    'I call `format_filename(path, shorten=True)` to show file names in a narrow column. I expect it to give me only the base name of the path, and when that name is longer than the limit, a shortened form that keeps the start and the end of the name joined by an ellipsis. Instead the call fails, so nothing is displayed. Without `shorten`, I expect the plain base name back.',
  ].join('\n');

  it('asks for a rewrite after a removed line, then after a copied test value, and keeps the third draft (rewrites = 2, stored by the score)', async () => {
    const c = pick(pySrc, 'function-group', 'src/textkit/paths.py#format_filename');
    const model = await scripted([
      reply.text('format_filename is broken. It should do\n```python\nif shorten and len(base_name) > limit:\n```\nlike before.'),
      reply.text('format_filename(path, shorten=True) should return "a_really_l...e_here.txt" for a long path, but it fails. I would like that fixed so that my file lists look right again in every view.'),
      reply.text(good),
    ]);
    const result = await writeTaskStatement(c, { failingTests: PY_SRC_TESTS, model, repoDir: pySrcDir });
    expect(result).toMatchObject({ source: 'model', statement: good, rewrites: 2, model: model.id });
    expect(result.rejected).toEqual([
      { attempt: 1, reason: 'leak: the text contains a line of the removed code: "if shorten and len(base_name) > limit:"; hidden-name: base_name' },
      { attempt: 2, reason: 'test-literal: a_really_l...e_here.txt' },
    ]);
    const requests = server!.chatRequests();
    expect(requests).toHaveLength(3);
    // The first prompt: the public API, its docs and the failing tests' source (read from the checkout); no helper, no file.
    const first = messagesOf(0);
    expect(first[0]!.content).toContain('the issue a user of a software library files');
    expect(first[1]!.content).toContain('- `format_filename`');
    expect(first[1]!.content).toContain('assert format_filename("/var/log/syslog") == "syslog"');
    expect(first[1]!.content).not.toMatch(/(?<!\w)_shorten|src\/textkit/);
    // Each rewrite request names the problem; the draft that quoted code is withheld, so no prompt carries removed code.
    const third = messagesOf(2);
    expect(third.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'user']);
    expect(third[2]!.content).toBe('(draft withheld: it quoted the implementation)');
    expect(third[4]!.content).toMatch(/^format_filename\(path, shorten=True\) should return/);
    expect(third[3]!.content).toMatch(/^That issue cannot be used: it contains 1 line\(s\) of the implementation.*it names internals a user never sees \("base_name"\)/);
    expect(third[5]!.content).toMatch(/^That issue cannot be used: it copies values the tests check \("a_really_l\.\.\.e_here\.txt"\); describe the expected results in words instead/);
    for (const r of requests) expect(carriesRemovedCode(JSON.stringify((r.body as { messages: unknown }).messages).replace(/\\n/g, '\n').replace(/\\"/g, '"'), c)).toBe(false);

    const quality = await scoreTaskQuality(c, { statement: result.statement, failingTests: PY_SRC_TESTS, repoDir: pySrcDir });
    expect(quality.clarityNotes).toEqual([]);
    expect(quality).toMatchObject({ source: 'model', rewrites: 2, leakage: 0, leaked: [], clarity: 5, clarityBy: 'heuristic', score: null });
  });

  it('rejects drafts that word the edit or name the edited file, and falls back to the template after two rewrites', async () => {
    const c = pick(tsClass, 'class', 'src/slugger.ts#Slugger');
    const model = await scripted([
      reply.text('The class `Slugger` in `src/slugger.ts` has been reduced to a stub. Please rebuild it.'),
      reply.text('The Slugger code was removed; its methods throw a "not implemented" error.'),
      reply.text('Slugger should give "hello-world-again" for the title "Hello World Again".'),
    ]);
    const result = await writeTaskStatement(c, { failingTests: TS_CLASS_TESTS, model, repoDir: tsClassDir });
    expect(result.source).toBe('template');
    expect(result.rewrites).toBe(2);
    expect(result.rejected.map((r) => r.reason)).toEqual([
      'deletion-wording: stub, reduced to, rebuild; edited-path: src/slugger.ts',
      'deletion-wording: was removed, "not implemented"',
      'test-literal: Hello World Again, hello-world-again',
    ]);
    expect(result.statement).toMatch(/^`Slugger` cannot be used/);
    const quality = await scoreTaskQuality(c, { statement: result.statement, failingTests: TS_CLASS_TESTS });
    expect(quality).toMatchObject({ source: 'template', rewrites: 2, leakage: 0 });
  });

  it('keeps a clean first draft with no rewrite', async () => {
    const c = pick(py, 'class', 'pkg/shapes.py#Circle');
    const clean = 'Circle has no working diameter\n\nI create a `Circle` with a radius and read its `diameter` property; I expect twice the radius, but creating the circle fails.';
    const model = await scripted([reply.text(clean)]);
    const result = await writeTaskStatement(c, { failingTests: ['tests/test_shapes.py::test_circle'], model });
    expect(result).toEqual({ source: 'model', statement: clean, model: 'openai:scripted-writer@' + server!.baseUrl, rewrites: 0, rejected: [] });
  });

  it('unwraps a draft fenced as a whole, whatever the fence’s language (```text, bare ```)', async () => {
    const c = pick(py, 'class', 'pkg/shapes.py#Circle');
    const clean = 'Circle has no working diameter\n\nI create a `Circle` with a radius and read its `diameter` property; I expect twice the radius, but creating the circle fails.';
    const model = await scripted([reply.text(`\`\`\`text\n${clean}\n\`\`\``)]);
    const result = await writeTaskStatement(c, { failingTests: ['tests/test_shapes.py::test_circle'], model });
    expect(result).toMatchObject({ source: 'model', statement: clean, rewrites: 0 });
  });

  it('falls back to the template when the model endpoint refuses, with the reason', async () => {
    const c = pick(ts, 'file', 'src/util.ts');
    const model = await scripted([reply.error(400)]);
    const result = await writeTaskStatement(c, { failingTests: ['t1'], model });
    expect(result.source).toBe('template');
    expect(result.rewrites).toBe(0);
    expect(result.rejected[0]!.reason).toMatch(/^model error: Flywheel\.ModelRequestError/);
    expect(result.statement).toMatch(/^Code that uses `round` fails: it should be available from the library/);
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
