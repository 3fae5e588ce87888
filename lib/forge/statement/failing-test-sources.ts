/**
 * The source of failing tests, for the statement writer: a test is the best description of what the removed code
 * must do. Ids in pytest (`tests/test_calc.py::TestAdd::test_neg[1-2]`) and vitest/jest/node
 * (`test/calc.test.ts > add > adds two numbers`) notation are found with the real parsers (a Python function or
 * method; an `it(…)` / `test(…)` call whose title matches); other ids come back without a body.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import type { FailingTest } from '../candidate.ts';
import type { RepoIndex } from '../parse/index-repository.ts';
import { parsePython } from '../parse/parse-python.ts';

/** What finding a test's source needs: the test files' text, and the outlines of the Python ones. */
export type TestSourceIndex = Pick<RepoIndex, 'texts' | 'outlines'>;

/** A test's source is cut to this many characters; a statement prompt needs the gist, not a fixture file. */
export const MAX_TEST_SOURCE = 4000;

function pytestSource(index: TestSourceIndex, file: string, names: string[]): string | undefined {
  const outline = index.outlines.get(file);
  if (!outline) return undefined;
  const qualified = names.map((n) => n.replace(/\[.*$/, '')).join('.');
  const symbol = outline.symbols.find((s) => s.qualifiedName === qualified && s.kind !== 'class');
  return symbol ? outline.text.slice(symbol.span.start, symbol.span.end).trimEnd() : undefined;
}

const TEST_CALLEES = new Set(['it', 'test', 'specify']);

function calleeName(expr: ts.Expression): string | undefined {
  if (ts.isIdentifier(expr)) return expr.text;
  if (ts.isPropertyAccessExpression(expr)) return calleeName(expr.expression);
  if (ts.isCallExpression(expr)) return calleeName(expr.expression); // test.each(table)('name', …)
  return undefined;
}

function scriptTestSource(index: TestSourceIndex, file: string, title: string): string | undefined {
  const text = index.texts.get(file);
  if (text === undefined) return undefined;
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  let found: string | undefined;
  const visit = (n: ts.Node): void => {
    if (found) return;
    if (ts.isCallExpression(n) && n.arguments.length >= 2 && TEST_CALLEES.has(calleeName(n.expression) ?? '')) {
      const first = n.arguments[0]!;
      if (ts.isStringLiteralLike(first) && first.text === title) {
        found = n.getText(sf);
        return;
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return found;
}

/** The file part of a test id, when the id has one (`tests/test_x.py::test_y`, `test/x.test.ts > t`). */
export function testFileOf(id: string): string | undefined {
  if (id.includes('::')) return id.split('::')[0] || undefined;
  if (id.includes(' > ')) return id.split(' > ')[0] || undefined;
  return undefined;
}

/**
 * Reads and parses only the test files the ids name (a statement needs a few tests, not the repository's outline).
 *
 * @example
 * const index = await testFileIndex(checkout, ['tests/test_calc.py::test_add']);
 */
export async function testFileIndex(repoDir: string, ids: string[]): Promise<TestSourceIndex> {
  const root = resolve(repoDir);
  const texts = new Map<string, string>();
  const outlines: TestSourceIndex['outlines'] = new Map();
  const files = [...new Set(ids.map(testFileOf).filter((f): f is string => f !== undefined && !f.split('/').includes('..')))];
  for (const f of files) {
    const text = await readFile(join(root, f), 'utf8').catch(() => undefined);
    if (text !== undefined) texts.set(f, text);
  }
  const py = [...texts].filter(([f]) => f.endsWith('.py')).map(([path, text]) => ({ path, absPath: join(root, path), text }));
  if (py.length > 0) {
    try {
      for (const o of await parsePython(py)) outlines.set(o.path, o);
    } catch {
      // No usable python3: pytest ids come back without a body.
    }
  }
  return { texts, outlines };
}

/**
 * The failing tests with their source where it can be found.
 *
 * @example
 * const tests = await failingTestSources(checkout, ['tests/test_shapes.py::test_area']);
 * await writeTaskStatement(candidate, { failingTests: tests, model });
 */
export async function failingTestSources(repoDir: string, ids: string[], options: { index?: TestSourceIndex } = {}): Promise<FailingTest[]> {
  const index = options.index ?? (await testFileIndex(repoDir, ids));
  return ids.map((id) => {
    let body: string | undefined;
    if (id.includes('::')) {
      const [file, ...names] = id.split('::');
      if (file && names.length > 0) body = pytestSource(index, file, names);
    } else if (id.includes(' > ')) {
      const parts = id.split(' > ');
      const file = parts[0]!;
      const title = parts.at(-1)!;
      if (parts.length >= 2) body = scriptTestSource(index, file, title);
    }
    return body ? { id, body: body.length > MAX_TEST_SOURCE ? `${body.slice(0, MAX_TEST_SOURCE)}\n…` : body } : { id };
  });
}

/**
 * The tests as given, with the source filled in from the checkout for those that came without it.
 *
 * @example
 * const tests = await withTestSources(['tests/test_calc.py::test_add'], checkout); // [{ id, body: 'def test_add(): …' }]
 */
export async function withTestSources(tests: FailingTest[], repoDir: string | undefined): Promise<FailingTest[]> {
  const bare = tests.filter((t) => t.body === undefined).map((t) => t.id);
  if (!repoDir || bare.length === 0) return tests;
  const found = new Map((await failingTestSources(repoDir, bare)).map((t) => [t.id, t]));
  return tests.map((t) => (t.body === undefined ? (found.get(t.id) ?? t) : t));
}
