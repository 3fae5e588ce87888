/**
 * The cheap static pre-filter for "skip what no passing test exercises": the test files whose import closure (their
 * imports, transitively, plus the `conftest.py` files pytest loads for them) reaches a file the candidate edits.
 * It over-approximates — a test that imports the module but never calls the symbol is kept — and misses only what
 * is loaded dynamically (computed `import()`, plugins, fixtures by name); certification's dynamic check decides.
 */
import type { Candidate } from '../candidate.ts';
import { importClosure, indexRepository, type RepoIndex } from '../parse/index-repository.ts';
import { isTestPath } from '../parse/source-files.ts';

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
