/**
 * Finds the candidate deletions of a repository: every strategy over every eligible source file, deduplicated,
 * each with the test files that statically reach it, in a stable order that interleaves strategies (so a cap keeps
 * a mix); within a strategy, candidates some test reaches come first, then path and position.
 */
import { resolve } from 'node:path';
import type { Candidate, CandidateLanguage, CandidateStrategy } from '../candidate.ts';
import type { RepoIndex } from '../parse/index-repository.ts';
import { indexRepository } from '../parse/index-repository.ts';
import { isConfigPath, isGeneratedText, isTestPath, isVendoredPath, passesFilters } from '../parse/source-files.ts';
import { classCandidates } from './class-candidates.ts';
import { fileCandidates } from './file-candidates.ts';
import { functionBodyCandidates } from './function-body-candidates.ts';
import { functionGroupCandidates } from './function-group-candidates.ts';
import { testsNaming, testsReaching } from './find-referencing-tests.ts';
import { inferReturnTypes } from './infer-return-types.ts';
import { identicalSibling, siblingIndex, type SiblingIndex } from './identical-siblings.ts';
import { dedupeCandidates } from './make-candidate.ts';

/** Strategy order: also the interleaving order (same list as `STRATEGIES`; not imported, to keep `candidate.ts` free of cycles). */
const STRATEGIES: readonly CandidateStrategy[] = ['function-body', 'class', 'function-group', 'file'];

export interface FindCandidatesOptions {
  /** Globs or path prefixes (repository-relative); a file must match one to be considered. Default: everything. */
  include?: string[];
  /** Globs or path prefixes to leave alone. Test, generated and vendored files are always left alone. */
  exclude?: string[];
  /** Languages for symbol strategies and file removal; `any` adds file removal for other languages. Default: all. */
  languages?: CandidateLanguage[];
  /** Cap on candidates returned (after dedupe, in a stable order that interleaves strategies). */
  maxCandidates?: number;
  /** Strategies to run. Default: all four. */
  strategies?: CandidateStrategy[];
  /** Give un-annotated TypeScript functions their inferred return type when their body is removed. Default true. */
  inferReturnTypes?: boolean;
  /** Drop candidates that no test file statically reaches (see `findReferencingTests`). Default false. */
  requireTests?: boolean;
  /** Told about each file (or strategy on a file) that yields nothing because it could not be handled, and why. */
  onSkip?: (path: string, reason: string) => void;
  /** A parsed repository to reuse (from `indexRepository`), so a caller that also asks for tests parses once. */
  index?: RepoIndex;
}

/**
 * Every candidate deletion in `repoDir` the options allow. Test files, runner configuration, generated files and
 * vendored folders (node_modules, dist, build, .venv, …) are never candidates; files that do not parse are skipped.
 *
 * @example
 * const candidates = await findCandidates('/src/calc', { include: ['src/'], strategies: ['function-body', 'file'], maxCandidates: 40 });
 */
export async function findCandidates(repoDir: string, options: FindCandidatesOptions = {}): Promise<Candidate[]> {
  const root = resolve(repoDir);
  const index = options.index ?? (await indexRepository(root));
  const strategies = new Set<CandidateStrategy>(options.strategies ?? STRATEGIES);
  const languages = new Set(options.languages ?? ['typescript', 'javascript', 'python', 'any']);
  const eligible = [...index.languages]
    .filter(([path, lang]) => languages.has(lang) && !isTestPath(path) && !isConfigPath(path) && !isVendoredPath(path) && passesFilters(path, options.include, options.exclude) && !isGeneratedText(index.texts.get(path) ?? ''))
    .map(([path]) => path)
    .sort();
  // Only files with an un-annotated function need the checker (building a program is the costly part).
  const tsFiles = eligible.filter((p) => index.languages.get(p) === 'typescript' && (index.outlines.get(p)?.symbols ?? []).some((s) => s.returnTypeAt !== undefined || (s.members ?? []).some((m) => m.returnTypeSlot !== undefined)));
  const returnTypes = options.inferReturnTypes === false || tsFiles.length === 0 ? undefined : inferReturnTypes(root, tsFiles);
  const byStrategy = new Map<CandidateStrategy, Candidate[]>(STRATEGIES.map((s) => [s, []]));
  for (const path of eligible) {
    const outline = index.outlines.get(path);
    const run = (strategy: CandidateStrategy, make: () => Candidate[]): void => {
      if (!strategies.has(strategy)) return;
      try {
        byStrategy.get(strategy)!.push(...make());
      } catch (e) {
        // One odd file never costs the whole repository its candidates.
        options.onSkip?.(path, `${strategy}: ${(e as Error).message}`);
      }
    };
    if (outline?.error) options.onSkip?.(path, `not parsed (${outline.error}): file removal only`);
    else if (outline) {
      run('function-body', () => functionBodyCandidates(outline, returnTypes));
      run('class', () => classCandidates(outline, returnTypes));
      run('function-group', () => functionGroupCandidates(outline, returnTypes));
    }
    run('file', () => fileCandidates(index, path));
  }
  const siblings = siblingIndex(index);
  // Within a strategy, what some test reaches comes first: with a cap, those are the ones that can certify.
  const lists = STRATEGIES.map((s) => {
    const withTests = dedupeCandidates(byStrategy.get(s)!).map((c) => ({ ...withSibling(c, index, siblings), context: { ...c.context, relatedTests: testsNaming(index, testsReaching(index, c.files), c.profile?.entryPoint) } }));
    return [...withTests.filter((c) => c.context.relatedTests.length > 0), ...(options.requireTests ? [] : withTests.filter((c) => c.context.relatedTests.length === 0))];
  });
  const interleaved: Candidate[] = [];
  for (let i = 0; lists.some((l) => i < l.length); i++) for (const l of lists) if (i < l.length) interleaved.push(l[i]!);
  const out = dedupeCandidates(interleaved);
  if (options.maxCandidates !== undefined) out.length = Math.min(out.length, options.maxCandidates);
  return out;
}

/** A function-body candidate whose body has a twin elsewhere names it: the answer is beside the deletion. */
function withSibling(c: Candidate, index: RepoIndex, siblings: SiblingIndex): Candidate {
  if (c.strategy !== 'function-body' || !c.profile) return c;
  const at = c.profile.entryPoint.lastIndexOf('#');
  const path = c.profile.entryPoint.slice(0, at);
  const qualifiedName = c.profile.entryPoint.slice(at + 1);
  const outline = at > 0 ? index.outlines.get(path) : undefined;
  const symbol = outline?.symbols.find((s) => s.qualifiedName === qualifiedName && s.kind !== 'class');
  const sibling = outline && symbol ? identicalSibling(siblings, outline, symbol) : undefined;
  return sibling ? { ...c, profile: { ...c.profile, identicalSibling: sibling } } : c;
}
