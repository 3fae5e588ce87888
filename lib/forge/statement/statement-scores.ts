/**
 * The deterministic scores of a statement, with or without a model: `leakage`, the share of the hidden evidence
 * (removed lines, names only the removed code has, values the failing tests assert) that the text carries, with the
 * items found; and `clarity`, 1 to 5, one point for each thing a person's issue does — names the entry point the user
 * calls, states the expected behaviour, keeps to a readable length, and speaks of behaviour rather than the edit.
 */
import type { Candidate, FailingTest } from '../candidate.ts';
import { escapeRegExp } from '../../shared/escape-reg-exp.ts';
import { carriedEvidence, hiddenEvidence, mentionsName, type HiddenEvidence, type HiddenItem } from './hidden-evidence.ts';
import { deletionWording, editedPathsNamed, MAX_STATEMENT_WORDS } from './statement-problems.ts';
import { statementSubject } from './statement-subject.ts';

/** A statement shorter than this many words cannot say what was tried, expected and seen. */
export const MIN_CLEAR_WORDS = 20;

export interface LeakageScore {
  /** Found items over hidden items, 0 when nothing is hidden. */
  leakage: number;
  /** The hidden items the text carries. */
  leaked: HiddenItem[];
  /** How many hidden items were looked for. */
  hiddenItems: number;
}

export interface ClarityScore {
  /** 1 (unusable) to 5 (a clear issue). */
  clarity: number;
  /** What cost points. */
  clarityNotes: string[];
}

/**
 * The leakage of a text.
 *
 * @example
 * statementLeakage('Use `_square(r)`.', candidate, tests); // { leakage: 0.25, leaked: [{ kind: 'name', text: '_square' }], hiddenItems: 4 }
 */
export function statementLeakage(text: string, candidate: Candidate, tests: FailingTest[], evidence: HiddenEvidence = hiddenEvidence(candidate, tests)): LeakageScore {
  const hiddenItems = evidence.lines.length + evidence.names.length + evidence.literals.length;
  const leaked = carriedEvidence(text, candidate, evidence);
  return { leakage: hiddenItems === 0 ? 0 : Math.round((leaked.length / hiddenItems) * 1000) / 1000, leaked, hiddenItems };
}

const EXPECTATION = /\b(?:should|expect(?:s|ed)?|must|ought to|instead of|want(?:s|ed)?|would like|returns?|raises?|throws?)\b/i;

/**
 * The heuristic clarity of a text.
 *
 * @example
 * statementClarity('`area` should return the area of a circle …', candidate); // { clarity: 5, clarityNotes: [] }
 */
export function statementClarity(text: string, candidate: Candidate): ClarityScore {
  const notes: string[] = [];
  const { publicNames } = statementSubject(candidate);
  if (publicNames.length > 0 && !publicNames.some((n) => mentionsName(text, n) || new RegExp(`(?<![\\w$])${escapeRegExp(n)}(?![\\w$])`).test(text)))
    notes.push(`does not name the entry point (${publicNames[0]})`);
  if (!EXPECTATION.test(text)) notes.push('states no expected behaviour');
  const words = text.split(/\s+/).filter(Boolean).length;
  if (words < MIN_CLEAR_WORDS) notes.push(`too short (${words} words)`);
  if (words > MAX_STATEMENT_WORDS) notes.push(`too long (${words} words)`);
  const edit = [...deletionWording(text), ...editedPathsNamed(text, candidate)];
  if (edit.length) notes.push(`describes the edit, not the behaviour (${edit.join(', ')})`);
  // Four checks (a text is too short or too long, never both): 5 when all hold, 1 when none does.
  return { clarity: 5 - notes.length, clarityNotes: notes };
}
