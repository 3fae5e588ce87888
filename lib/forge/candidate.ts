/**
 * The forge's candidate deletions: what a strategy proposes to remove from a repository whose tests pass, and the
 * descriptions the statement writer reads. Types only: the functions that find, apply, revert and describe candidates
 * live in `candidates/`, `leftovers/` and `statement/`, and import these types (never the other way round, so the
 * folders form no import cycle). Certification (`certify-candidate.ts`) consumes them.
 *
 * @example
 * import type { Candidate } from './candidate.ts';
 * const candidates: Candidate[] = await findCandidates('/src/calc', { languages: ['typescript'], maxCandidates: 50 });
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

/**
 * What ranking and the static refusals read about a candidate (set by `findCandidates`): who would call what it
 * deletes, how much it deletes, and where.
 */
export interface CandidateProfile {
  /** The entry point a user calls: the function, the class, a group's entry (qualified, `src/url.ts#withHttp`). */
  entryPoint: string;
  /** Public API: exported (TypeScript/JavaScript), or no leading underscore and not private by `__all__` (Python). */
  isPublic: boolean;
  /** Statements removed: non-blank, non-comment lines of the deleted code. */
  removedLines: number;
  /** Deleted spans (character offsets in the original file), to find candidates that overlap. */
  spans: Array<{ path: string; start: number; end: number }>;
  /** Another function in the repository with the same body (whitespace and names aside): the answer is beside it. */
  identicalSibling?: string;
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
  /** Ranking facts (absent on candidates made by hand). */
  profile?: CandidateProfile;
}


/** Scores from the quality rubric, 1 (bad) to 5 (good). */
export interface TaskQualityScore {
  /** Can an agent rebuild the feature from the statement, the signatures and the visible tests? */
  solvableFromVisible: number;
  /** Is the removed code one coherent feature (not an arbitrary slice)? */
  coherentFeature: number;
  /** Does the statement read like a user's clear issue (what they tried, expected, saw) without giving the answer away? */
  clarity?: number;
  reason: string;
}

/** A failing test as the statement writer sees it: its id, and its source when the caller has it. */
export interface FailingTest {
  id: string;
  body?: string;
}
