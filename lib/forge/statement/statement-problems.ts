/**
 * Why a statement is not one a user would write: it carries the removed code (a line, a name only the removed code
 * has), copies the values the failing tests assert, says what was deleted or where (the edit's wording, the edited
 * source files), or is empty or overlong. Each problem is worded for the rewrite request, and never quotes a removed
 * line (the writer's prompts must not carry the removed code).
 */
import type { Candidate, FailingTest } from '../candidate.ts';
import { escapeRegExp } from '../../shared/escape-reg-exp.ts';
import { carriedEvidence, hiddenEvidence, type HiddenEvidence } from './hidden-evidence.ts';

/** A statement longer than this many words is not an issue a user writes. */
export const MAX_STATEMENT_WORDS = 450;

/** How a forge edit is worded; a user reporting missing behaviour never writes this. */
export const DELETION_WORDING: readonly RegExp[] = [
  /\bstub(?:s|bed)?\b/i,
  /\breduced to\b/i,
  /\b(?:has|have|had|was|were|been|got|is|are)\s+(?:been\s+)?(?:removed|deleted|stripped|gutted|emptied|blanked|cut)\b/i,
  /\b(?:removed|deleted)\s+(?:code|body|bodies|implementation|lines?|function|functions|class|classes|module|file|helpers?)\b/i,
  /\bNotImplementedError\b/,
  /["'`]not[- ]implemented["'`]|\bnot[- ]implemented\s+error\b/i,
  /\b(?:re-?implement|restore|rebuild|put back|reinstate)\b/i,
];

export type ProblemKind = 'removed-line' | 'hidden-name' | 'test-literal' | 'deletion-wording' | 'edited-path' | 'empty' | 'too-long';

export interface StatementProblem {
  kind: ProblemKind;
  /** Said to the writer when it is asked for a rewrite. */
  message: string;
  /** What was found (a removed line is reported here, never in `message`). */
  found: string[];
}

/** The source files the candidate edits, as paths and as file names (`src/click/_compat.py`, `_compat.py`). */
function editedPathForms(candidate: Pick<Candidate, 'edits'>): string[] {
  const out = new Set<string>();
  for (const e of candidate.edits) {
    out.add(e.path);
    const base = e.path.slice(e.path.lastIndexOf('/') + 1);
    if (/\.\w+$/.test(base)) out.add(base);
  }
  return [...out];
}

function pathMentioned(text: string, path: string): boolean {
  return new RegExp(`(?<![\\w./-])${escapeRegExp(path)}(?![\\w-]|\\.\\w)`).test(text);
}

/** True when the text says what was deleted or where, the way a forge edit is worded. */
export function deletionWording(text: string): string[] {
  return DELETION_WORDING.flatMap((re) => re.exec(text)?.[0] ?? []);
}

/** The source files the text names. */
export function editedPathsNamed(text: string, candidate: Pick<Candidate, 'edits'>): string[] {
  return editedPathForms(candidate).filter((p) => pathMentioned(text, p));
}

const list = (items: string[]) => items.map((i) => `"${i.length > 60 ? `${i.slice(0, 57)}...` : i}"`).join(', ');

/**
 * The problems of a statement; empty when it may be given to an agent.
 *
 * @example
 * const problems = statementProblems(draft, candidate, tests);
 * if (problems.length) ask(`Rewrite it: ${problems.map((p) => p.message).join('; ')}`);
 */
export function statementProblems(text: string, candidate: Candidate, tests: FailingTest[], evidence: HiddenEvidence = hiddenEvidence(candidate, tests)): StatementProblem[] {
  const problems: StatementProblem[] = [];
  const words = text.split(/\s+/).filter(Boolean).length;
  if (words === 0) return [{ kind: 'empty', message: 'it is empty', found: [] }];
  const carried = carriedEvidence(text, candidate, evidence);
  const lines = carried.filter((c) => c.kind === 'line').map((c) => c.text);
  const names = carried.filter((c) => c.kind === 'name').map((c) => c.text);
  const literals = carried.filter((c) => c.kind === 'literal').map((c) => c.text);
  if (lines.length) problems.push({ kind: 'removed-line', message: `it contains ${lines.length} line(s) of the implementation; describe the behaviour in prose, without code from the implementation`, found: lines });
  if (names.length) problems.push({ kind: 'hidden-name', message: `it names internals a user never sees (${list(names)}); name only the public API`, found: names });
  if (literals.length) problems.push({ kind: 'test-literal', message: `it copies values the tests check (${list(literals)}); describe the expected results in words instead`, found: literals });
  const wording = deletionWording(text);
  if (wording.length) problems.push({ kind: 'deletion-wording', message: `it describes an edit to the code (${list(wording)}); describe the behaviour the user wants instead`, found: wording });
  const paths = editedPathsNamed(text, candidate);
  if (paths.length) problems.push({ kind: 'edited-path', message: `it names the library's source files (${list(paths)}); a user names the API, not the files`, found: paths });
  if (words > MAX_STATEMENT_WORDS) problems.push({ kind: 'too-long', message: `it has ${words} words; keep it under ${MAX_STATEMENT_WORDS}`, found: [] });
  return problems;
}
