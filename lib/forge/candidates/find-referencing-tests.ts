/**
 * The cheap static pre-filter for "skip what no passing test exercises": the test files whose import closure (their
 * imports, transitively, plus the `conftest.py` files pytest loads for them) reaches a file the candidate edits.
 * It over-approximates — a test that imports the module but never calls the symbol is kept — and misses only what
 * is loaded dynamically (computed `import()`, plugins, fixtures by name); certification's dynamic check decides.
 */
import type { Candidate } from '../candidate.ts';
import { importClosure, indexRepository, type RepoIndex } from '../parse/index-repository.ts';
import { isTestPath } from '../parse/source-files.ts';
import { escapeRegExp } from '../../shared/escape-reg-exp.ts';

/** Per test file, the files it loads; computed once per index. */
const closures = new WeakMap<RepoIndex, Map<string, Set<string>>>();

function conftestsFor(index: RepoIndex, testFile: string): string[] {
  const parts = testFile.split('/');
  const out: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    const c = [...parts.slice(0, i), 'conftest.py'].join('/');
    if (c !== testFile && index.languages.has(c)) out.push(c);
  }
  return out;
}

/** Every test file's import closure. */
export function testClosures(index: RepoIndex): Map<string, Set<string>> {
  let map = closures.get(index);
  if (map) return map;
  map = new Map();
  for (const f of index.outlines.keys()) {
    if (!isTestPath(f)) continue;
    map.set(f, importClosure(index, [f, ...(f.endsWith('.py') ? conftestsFor(index, f) : [])]));
  }
  closures.set(index, map);
  return map;
}

/** Test files that statically reach any of `files`, sorted. */
export function testsReaching(index: RepoIndex, files: string[]): string[] {
  const out: string[] = [];
  for (const [test, closure] of testClosures(index)) if (files.some((f) => closure.has(f))) out.push(test);
  return out.sort();
}

/**
 * Of the test files that reach a candidate, those that name its entry point (`multiply` of `src/m.py#Matrix.multiply`,
 * `LRUCache` of `src/c.py#LRUCache.__init__`, as a word). A package whose `__init__.py` or `index.ts` re-exports everything makes every test reach every module;
 * the name is what tells which tests are about this feature. A private entry point (`_chunks`), a file, or a name no
 * reaching test spells keeps the whole import closure: the first pass then over-approximates, never misses.
 *
 * @example
 * testsNaming(index, ['tests/test_matrix.py', 'tests/test_text.py'], 'src/tally/matrix.py#Matrix.multiply'); // ['tests/test_matrix.py']
 */
export function testsNaming(index: RepoIndex, reaching: readonly string[], entryPoint: string | undefined): string[] {
  // The innermost public part: `LRUCache` for `LRUCache.__init__` or `LRUCache._evict`, `multiply` for `Matrix.multiply`.
  if (!entryPoint?.includes('#')) return [...reaching];
  const file = entryPoint.slice(0, entryPoint.lastIndexOf('#'));
  const parts = entryPoint.slice(entryPoint.lastIndexOf('#') + 1).split('.');
  const own = [...parts].reverse().find((p) => !p.startsWith('_'));
  // A private helper is named by the public functions of its file that call it.
  const names = own ? [own] : publicCallers(index, file, parts[parts.length - 1]!);
  const words = names.filter((n) => n.length >= 3).map((n) => new RegExp(`(?<![A-Za-z0-9_$])${escapeRegExp(n)}(?![A-Za-z0-9_$])`));
  if (words.length === 0) return [...reaching];
  const naming = reaching.filter((t) => words.some((w) => w.test(index.texts.get(t) ?? '')));
  return naming.length > 0 ? naming : [...reaching];
}

/** The public names (function, or class of a method) in `file` whose body references `name`. */
function publicCallers(index: RepoIndex, file: string, name: string): string[] {
  const out = new Set<string>();
  for (const s of index.outlines.get(file)?.symbols ?? []) {
    if (!s.references.includes(name)) continue;
    const publicName = [...s.qualifiedName.split('.')].reverse().find((p) => !p.startsWith('_'));
    if (publicName) out.add(publicName);
  }
  return [...out];
}

/**
 * The test files that statically reach the candidate's source files (an edited importer of a deleted file counts).
 * An empty answer means no test can exercise it: skip it before paying for a sandbox run.
 *
 * @example
 * const tests = await findReferencingTests('/src/calc', candidate);
 * if (tests.length === 0) skip(candidate, 'no test reaches it');
 */
export async function findReferencingTests(repoDir: string, candidate: Pick<Candidate, 'files'>, options: { index?: RepoIndex } = {}): Promise<string[]> {
  const index = options.index ?? (await indexRepository(repoDir));
  return testsReaching(index, candidate.files);
}
