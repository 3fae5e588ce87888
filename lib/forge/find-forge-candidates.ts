/**
 * The candidates a forge run tries, as certification sees them (`ForgeCandidate`): the candidates module's
 * function, class and group deletions when it is present (`./candidate.ts`, parsed with real parsers), and always
 * the language-agnostic file-level strategy here: delete one source file (any language), whose tests then fail to
 * import it — which certification accepts for this strategy only.
 *
 * Paths are filtered by the spec's include/exclude lists and languages; derived artefacts in the tree (bytecode,
 * build output, caches, source maps, coverage) are stripped from every candidate's task tree.
 */
import { matchesGlob } from 'node:path';
import { isRunnerConfigPath, isTestPath } from '../harness/grading/test-paths.ts';
import type { Candidate, CandidateLanguage } from './candidate.ts';
import type { ModelsPort } from '../ports/models.ts';
import { findCandidates } from './candidates/find-candidates.ts';
import { findLeftovers } from './leftovers/strip-leftovers.ts';
import { findLeaks } from './statement/find-leaks.ts';
import { scoreTaskQuality } from './statement/score-task-quality.ts';
import { writeTaskStatement } from './statement/write-task-statement.ts';
import type { ForgeCandidate } from './certify-candidate.ts';
import { listTreeFiles, readTreeFile, type WorkRepo } from './forge-git.ts';
import type { ForgeSpec } from './schemas.ts';

/** Source extensions by language name (as `--languages` takes them). */
export const LANGUAGE_EXTENSIONS: Record<string, readonly string[]> = {
  typescript: ['.ts', '.tsx', '.mts', '.cts'],
  javascript: ['.js', '.jsx', '.mjs', '.cjs'],
  python: ['.py'],
  go: ['.go'],
  rust: ['.rs'],
  java: ['.java'],
  kotlin: ['.kt'],
  ruby: ['.rb'],
  php: ['.php'],
  csharp: ['.cs'],
  c: ['.c', '.h'],
  cpp: ['.cc', '.cpp', '.hpp', '.hh'],
};

/** Derived artefacts: what a build, a test run or a type checker leaves beside the source. */
export const DERIVED_ARTEFACT_GLOBS: readonly string[] = [
  '**/__pycache__/**',
  '**/*.pyc',
  '**/*.pyo',
  '**/.mypy_cache/**',
  '**/.pyright/**',
  '**/.ruff_cache/**',
  '**/.pytest_cache/**',
  '**/*.tsbuildinfo',
  '**/dist/**',
  '**/build/**',
  '**/*.map',
  '**/coverage/**',
  '**/.coverage',
  '**/.nyc_output/**',
  '**/*.class',
  '**/target/**',
];

function under(path: string, prefixes: readonly string[]): boolean {
  return prefixes.some((p) => {
    const clean = p.replace(/^\.\//, '').replace(/\/+$/, '');
    return clean === '' || path === clean || path.startsWith(`${clean}/`) || matchesGlob(path, clean);
  });
}

/** True when the spec lets the forge delete code at this path. */
export function pathAllowed(path: string, spec: Pick<ForgeSpec, 'includePaths' | 'excludePaths' | 'languages'>): boolean {
  if (spec.includePaths.length > 0 && !under(path, spec.includePaths)) return false;
  if (under(path, spec.excludePaths)) return false;
  if (spec.languages && spec.languages.length > 0) {
    const exts = spec.languages.flatMap((l) => LANGUAGE_EXTENSIONS[l.toLowerCase()] ?? [`.${l.toLowerCase()}`]);
    if (!exts.some((e) => path.endsWith(e))) return false;
  }
  return true;
}

export function isDerivedArtefact(path: string): boolean {
  return DERIVED_ARTEFACT_GLOBS.some((g) => matchesGlob(path, g));
}

const ALL_SOURCE_EXTENSIONS = Object.values(LANGUAGE_EXTENSIONS).flat();

/** Test files that name a module (its stem as an import path segment): the static pre-filter for the first pass. */
export function testFilesNaming(stem: string, tests: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const [path, text] of tests) {
    const named = [`/${stem}'`, `/${stem}"`, `/${stem}.`, `'${stem}'`, `"${stem}"`, `.${stem} import`, `from ${stem} import`, `import ${stem}`, `.${stem}\n`].some((p) => text.includes(p));
    if (named) out.push(path);
  }
  return out;
}

/**
 * File-level candidates: one per source file the spec allows (tests and runner configs are never deleted).
 *
 * @example
 * const candidates = await fileRemovalCandidates(work, spec);
 */
export async function fileRemovalCandidates(work: WorkRepo, spec: ForgeSpec): Promise<ForgeCandidate[]> {
  const files = await listTreeFiles(work.gitDir, work.baseTree);
  const leftovers = files.filter(isDerivedArtefact);
  const tests = new Map<string, string>();
  for (const f of files) if (isTestPath(f) && ALL_SOURCE_EXTENSIONS.some((e) => f.endsWith(e))) tests.set(f, (await readTreeFile(work.gitDir, work.baseTree, f)) ?? '');
  const out: ForgeCandidate[] = [];
  for (const path of files) {
    if (isTestPath(path) || isRunnerConfigPath(path) || isDerivedArtefact(path)) continue;
    if (!ALL_SOURCE_EXTENSIONS.some((e) => path.endsWith(e))) continue;
    if (!pathAllowed(path, spec)) continue;
    const base = path.slice(path.lastIndexOf('/') + 1);
    const stem = base.slice(0, base.lastIndexOf('.'));
    if (stem === '__init__' || stem === 'index' || stem === 'main') continue;
    const testFiles = testFilesNaming(stem, tests);
    out.push({ id: `file:${path}`, strategy: 'remove-file', symbols: [path], edits: [{ path, content: null }], testFiles, leftovers });
  }
  // Files some test names first: they are the ones likely to certify.
  return out.sort((a, b) => Number((b.testFiles?.length ?? 0) > 0) - Number((a.testFiles?.length ?? 0) > 0));
}

/** The spec's languages in the candidates module's terms (a language it has no parser for is file-level `any`). */
export function candidateLanguages(languages: readonly string[] | undefined): CandidateLanguage[] | undefined {
  if (!languages || languages.length === 0) return undefined;
  const known = new Set<string>(['typescript', 'javascript', 'python', 'any'] satisfies CandidateLanguage[]);
  return [...new Set(languages.map((l) => (known.has(l.toLowerCase()) ? (l.toLowerCase() as CandidateLanguage) : 'any')))];
}

/** What the forge hands the candidates module's statement writer and quality rubric. */
export interface CandidateSourceOptions {
  /** Writes statements and scores quality; without it the statement is the template and quality is unscored. */
  model?: ModelsPort;
  /** The base checkout: the statement writer reads the failing tests' source from it. */
  repoDir?: string;
}

/**
 * A candidates-module candidate as certification takes it: its edits, its static pre-filter (the test files that
 * reach it), the derived artefacts to strip, and the statement writer and quality rubric bound to it.
 */
export function toForgeCandidate(c: Candidate, leftovers: readonly string[], options: CandidateSourceOptions = {}): ForgeCandidate {
  const model = options.model;
  return {
    id: c.id,
    strategy: c.strategy,
    symbols: c.symbols,
    edits: c.edits.map((e) => ({ path: e.path, content: e.content })),
    ...(c.context.relatedTests ? { testFiles: c.context.relatedTests } : {}),
    ...(c.profile ? { profile: c.profile } : {}),
    leftovers: [...leftovers],
    statement: async ({ failToPass }) => (await writeTaskStatement(c, { failingTests: failToPass, ...(model ? { model } : {}), ...(options.repoDir ? { repoDir: options.repoDir } : {}) })).statement,
    statementLeak: (text) => findLeaks(text, c, { allowed: [...c.context.signatures, ...c.context.docComments] })[0]?.line,
    quality: async ({ statement, failToPass }) => scoreTaskQuality(c, { statement, failingTests: failToPass, ...(model ? { model } : {}), ...(options.repoDir ? { repoDir: options.repoDir } : {}) }),
  };
}

/**
 * Every candidate the forge tries: the candidates module's (function bodies, classes, function groups, files with
 * their imports; parsed with the TypeScript compiler API and Python's own parser), found in the base checkout, each
 * with the test files that statically reach it; the file-level strategy here only if that module fails on the tree.
 *
 * @example
 * const result = await forgeRepository({ spec, provider, ports, candidates: findForgeCandidates });
 */
export function forgeCandidateSource(options: CandidateSourceOptions = {}): (work: WorkRepo, spec: ForgeSpec) => Promise<ForgeCandidate[]> {
  return async (work, spec) => {
    const languages = candidateLanguages(spec.languages);
    let found: Candidate[];
    try {
      found = await findCandidates(work.checkoutDir, {
        ...(spec.includePaths.length ? { include: spec.includePaths } : {}),
        ...(spec.excludePaths.length ? { exclude: spec.excludePaths } : {}),
        ...(languages ? { languages } : {}),
        // No cap here: the ranking (`rank/rank-candidates.ts`) picks across the whole repository, not the first files.
      });
    } catch {
      return fileRemovalCandidates(work, spec);
    }
    // The checkout holds exactly the tree's files: leftovers are judged as tracked files (see strip-leftovers.ts).
    const tracked = new Set(await listTreeFiles(work.gitDir, work.baseTree));
    const out: ForgeCandidate[] = [];
    for (const c of found) out.push(toForgeCandidate(c, await findLeftovers(work.checkoutDir, c, { tracked }), { ...options, repoDir: work.checkoutDir }));
    return out;
  };
}

/** `forgeCandidateSource()` without a model: template statements, unscored quality. */
export const findForgeCandidates = forgeCandidateSource();
