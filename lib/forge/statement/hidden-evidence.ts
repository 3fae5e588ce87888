/**
 * What a statement must not carry, and where a text carries it: the removed code's non-trivial lines, the names only
 * the removed code has (helpers, private members, its local `snake_case` / `camelCase` names), and the literal values
 * the failing tests assert (a statement that copies them hands the agent the expected output). Anything the agent
 * sees anyway — the signatures, the doc comments, the failing tests' names — is not hidden.
 */
import type { Candidate, FailingTest } from '../candidate.ts';
import { extractLiterals } from '../../harness/integrity/test-literals.ts';
import { findLeaks, normalizeLine, removedCodeLines } from './find-leaks.ts';
import { statementSubject } from './statement-subject.ts';
import { escapeRegExp } from '../../shared/escape-reg-exp.ts';

/** Test strings shorter than this are too common to mean copying (`"a"`, `"abc"`). */
export const MIN_TEST_LITERAL = 5;
/** Removed names shorter than this are ordinary words (`x`, `sum`). */
export const MIN_HIDDEN_NAME = 4;

export type HiddenKind = 'line' | 'name' | 'literal';

export interface HiddenItem {
  kind: HiddenKind;
  /** The line (whitespace collapsed), the name, or the literal as the test writes it. */
  text: string;
}

export interface HiddenEvidence {
  lines: string[];
  names: string[];
  /** Literal values: strings by content, numbers as written. */
  literals: Array<{ value: string; number: boolean }>;
}

const IDENTIFIER = /[A-Za-z_$][\w$]*/g;

/** Names that read as code, not as words: `compute_total`, `_square`, `maxDepth`. */
function codeShaped(name: string): boolean {
  return /[a-z0-9][A-Z]/.test(name) || /\w_\w/.test(name) || /^_[A-Za-z]/.test(name);
}

/** The text as a literal pattern inside a RegExp. */

/** True when the text uses the name: anywhere as a whole word for code-shaped names, as code (`` `x` ``, `x(`, `.x`) otherwise. */
export function mentionsName(text: string, name: string): boolean {
  const short = name.slice(name.lastIndexOf('.') + 1);
  const whole = (n: string, t: string) => new RegExp(`(?<![\\w$])${escapeRegExp(n)}(?![\\w$])`).test(t);
  if (name.includes('.') && whole(name, text)) return true;
  if (codeShaped(short)) return whole(short, text);
  const codeSpans = [...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);
  return codeSpans.some((span) => whole(short, span)) || new RegExp(`(?<![\\w$])${escapeRegExp(short)}\\s*\\(|\\.${escapeRegExp(short)}(?![\\w$])`).test(text);
}

function mentionsLiteral(text: string, literal: { value: string; number: boolean }): boolean {
  if (literal.number) return new RegExp(`(?<![\\w.])${escapeRegExp(literal.value)}(?!\\w|\\.\\d)`).test(text);
  // Whole words at the ends: the test's "Intro" is not in "Introduction".
  const value = normalizeLine(literal.value);
  return new RegExp(`${/^\w/.test(value) ? '(?<!\\w)' : ''}${escapeRegExp(value)}${/\w$/.test(value) ? '(?!\\w)' : ''}`).test(normalizeLine(text));
}

const NUMBER = /(?<![\w.])-?(?:\d+\.\d+|\d{4,})(?![\w.])/g;

/**
 * The hidden evidence of a candidate, given the failing tests (with their source where known).
 *
 * @example
 * const evidence = hiddenEvidence(candidate, [{ id: 'test_slug', body: 'assert slug("A b") == "a-b-c-d"' }]);
 * evidence.literals; // [{ value: 'a-b-c-d', number: false }]
 */
export function hiddenEvidence(candidate: Candidate, tests: FailingTest[]): HiddenEvidence {
  const subject = statementSubject(candidate);
  // Private helpers' signatures are in the candidate's context, but a statement must not name them.
  const visible = [...subject.publicSignatures, ...candidate.context.docComments].join('\n');
  const testText = tests.map((t) => `${t.id}\n${t.body ?? ''}`).join('\n');
  const kept = candidate.edits.map((e) => e.content ?? '').join('\n');
  const visibleLines = normalizeLine(`${visible}\n${testText}`);
  const lines = removedCodeLines(candidate).filter((l) => !visibleLines.includes(l));
  const seen = new Set<string>();
  const publicShort = new Set(subject.publicNames.map((n) => n.slice(n.lastIndexOf('.') + 1)));
  const wordIn = (name: string, text: string) => new RegExp(`(?<![\\w$])${escapeRegExp(name)}(?![\\w$])`).test(text);
  const hiddenName = (name: string) => !publicShort.has(name) && !wordIn(name, visible) && !wordIn(name, testText) && !wordIn(name, kept);
  const names: string[] = [];
  for (const name of subject.privateNames) {
    const short = name.slice(name.lastIndexOf('.') + 1);
    if (short.length >= 2 && hiddenName(short) && !seen.has(short)) {
      seen.add(short);
      names.push(name);
    }
  }
  for (const line of lines)
    for (const [name] of line.matchAll(IDENTIFIER)) {
      if (seen.has(name) || name.length < MIN_HIDDEN_NAME || !codeShaped(name) || /^__\w+__$/.test(name) || !hiddenName(name)) continue;
      seen.add(name);
      names.push(name);
    }
  const literals: HiddenEvidence['literals'] = [];
  const taken = new Set<string>();
  const testNames = tests.map((t) => t.id).join('\n');
  for (const t of tests) {
    if (!t.body) continue;
    for (const l of extractLiterals(t.body, MIN_TEST_LITERAL)) {
      if (!l.key.startsWith('s:')) continue;
      const value = l.key.slice(2);
      if (!/[A-Za-z0-9]/.test(value) || visible.includes(value) || testNames.includes(value) || publicShort.has(value) || taken.has(`s:${value}`)) continue;
      taken.add(`s:${value}`);
      literals.push({ value, number: false });
    }
    const strings = [...t.body.matchAll(/(["'`])(?:\\.|(?!\1)[^\\\n])*\1/g)].map((m) => [m.index, m.index + m[0].length] as const);
    for (const m of t.body.matchAll(NUMBER)) {
      if (strings.some(([a, b]) => m.index >= a && m.index < b) || visible.includes(m[0]) || taken.has(`n:${m[0]}`)) continue;
      taken.add(`n:${m[0]}`);
      literals.push({ value: m[0], number: true });
    }
  }
  return { lines, names, literals };
}

/**
 * The hidden items a text carries, in the evidence's order (lines, names, literals).
 *
 * @example
 * carriedEvidence('Use `_square` …', candidate, evidence); // [{ kind: 'name', text: '_square' }]
 */
export function carriedEvidence(text: string, candidate: Pick<Candidate, 'edits'>, evidence: HiddenEvidence): HiddenItem[] {
  const lineSet = new Set(evidence.lines);
  const out: HiddenItem[] = findLeaks(text, candidate)
    .filter((l) => lineSet.has(l.line))
    .map((l) => ({ kind: 'line' as const, text: l.line }));
  for (const name of evidence.names) if (mentionsName(text, name)) out.push({ kind: 'name', text: name });
  for (const literal of evidence.literals) if (mentionsLiteral(text, literal)) out.push({ kind: 'literal', text: literal.value });
  return out;
}
