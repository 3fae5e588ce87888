/**
 * The forge's candidate deletions: what a strategy proposes to remove from a repository whose tests pass, and the
 * functions that find, apply, revert and describe them. Certification (`certify-candidate.ts`) consumes these; this
 * file holds the shared types and re-exports the entry points, so callers import one module.
 *
 * @example
 * const candidates = await findCandidates('/src/calc', { languages: ['typescript'], maxCandidates: 50 });
 * for (const c of candidates) console.log(c.id, c.strategy, c.symbols);
 */

/** How a candidate deletes a feature; each task is named with its strategy. */
export const CANDIDATE_STRATEGIES = ['function-body', 'class', 'function-group', 'file'] as const;
export type CandidateStrategy = (typeof CANDIDATE_STRATEGIES)[number];

/** Languages with symbol-level strategies; `any` is a file-level candidate in a language without a parser here. */
export const CANDIDATE_LANGUAGES = ['typescript', 'javascript', 'python', 'any'] as const;
export type CandidateLanguage = (typeof CANDIDATE_LANGUAGES)[number];

/**
 * One file change. `original` is the file as found (null if the edit creates it), `content` the new text, or null to
 * delete the file. Structurally a superset of `forge-git.ts`'s `FileEdit` (`{ path, content }`).
 */
export interface CandidateFileEdit {
  /** Repository-relative, forward slashes. */
  path: string;
  original: string | null;
  content: string | null;
}

/** What the statement writer may show: nothing here is removed implementation. */
export interface CandidateContext {
  /** Signatures of the removed symbols (declaration heads, no bodies), e.g. `export function add(a: number, b: number): number`. */
  signatures: string[];
  /** Doc comments / docstrings of the removed symbols, as written. */
  docComments: string[];
  /** Repository-relative test files that statically reach the candidate's files (see `findReferencingTests`). */
  relatedTests?: string[];
}

export interface Candidate {
  /** Stable: a hash of the strategy and the edits, prefixed with a readable slug; valid as a task id segment. */
  id: string;
  strategy: CandidateStrategy;
  language: CandidateLanguage;
  /** Qualified names removed (`calc.ts#add`, `shapes.py#Circle.area`); for `file`, the file path. */
  symbols: string[];
  /** Files the candidate edits or deletes (the edited importers of a removed file included). */
  files: string[];
  edits: CandidateFileEdit[];
  context: CandidateContext;
}

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

/** Scores from the quality rubric, 1 (bad) to 5 (good). */
export interface TaskQualityScore {
  /** Can an agent rebuild the feature from the statement, the signatures and the visible tests? */
  solvableFromVisible: number;
  /** Is the removed code one coherent feature (not an arbitrary slice)? */
  coherentFeature: number;
  reason: string;
}

/** A failing test as the statement writer sees it: its id, and its source when the caller has it. */
export interface FailingTest {
  id: string;
  body?: string;
}

export type { ModelsPort } from '../ports/models.ts';
import type { RepoIndex } from './parse/index-repository.ts';
export type { RepoIndex };
export { indexRepository } from './parse/index-repository.ts';

export { findCandidates } from './candidates/find-candidates.ts';
export { applyCandidate, revertCandidate } from './candidates/apply-candidate.ts';
export { findReferencingTests } from './candidates/find-referencing-tests.ts';
export { findLeftovers, stripLeftovers } from './leftovers/strip-leftovers.ts';
export { writeTaskStatement, type TaskStatement, type WriteStatementOptions } from './statement/write-task-statement.ts';
export { findLeaks, removedCodeLines, type Leak } from './statement/find-leaks.ts';
export { failingTestSources } from './statement/failing-test-sources.ts';
export { scoreTaskQuality, type TaskQualityResult, type ScoreQualityOptions } from './statement/score-task-quality.ts';
