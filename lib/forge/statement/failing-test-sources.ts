/**
 * The source of failing tests, for the statement writer: a test is the best description of what the removed code
 * must do. Ids in pytest (`tests/test_calc.py::TestAdd::test_neg[1-2]`) and vitest/jest/node
 * (`test/calc.test.ts > add > adds two numbers`) notation are found with the real parsers (a Python function or
 * method; an `it(…)` / `test(…)` call whose title matches); other ids come back without a body.
 */
import ts from 'typescript';
import type { FailingTest } from '../candidate.ts';
import { indexRepository, type RepoIndex } from '../parse/index-repository.ts';

/** A test's source is cut to this many characters; a statement prompt needs the gist, not a fixture file. */
export const MAX_TEST_SOURCE = 4000;

function pytestSource(index: RepoIndex, file: string, names: string[]): string | undefined {
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

function scriptTestSource(index: RepoIndex, file: string, title: string): string | undefined {
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

/**
 * The failing tests with their source where it can be found.
 *
 * @example
 * const tests = await failingTestSources(checkout, ['tests/test_shapes.py::test_area']);
 * await writeTaskStatement(candidate, { failingTests: tests, model });
 */
export async function failingTestSources(repoDir: string, ids: string[], options: { index?: RepoIndex } = {}): Promise<FailingTest[]> {
  const index = options.index ?? (await indexRepository(repoDir));
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
