/**
 * The leak check for task statements (and the evidence test for derived artefacts): the non-trivial lines of code a
 * candidate removes, and where a text carries one of them. Lines are compared with whitespace collapsed, so
 * re-indenting or re-wrapping a removed line does not hide it. Trivial lines (`}`, `return`, `pass`, `else:`, short
 * punctuation) are ignored: they say nothing about the solution and would reject every statement.
 */
import type { Candidate } from '../candidate.ts';

/** Collapses whitespace runs to one space and trims. */
export function normalizeLine(line: string): string {
  return line.replace(/\s+/g, ' ').trim();
}

const KEYWORD_ONLY = /^(return|pass|break|continue|else|try|finally|raise|throw|yield|await|default|except|end|do|begin|\.\.\.)\b[\s:;{}()]*$/;

/** True for lines that carry no information about an implementation. */
export function isTrivialLine(normalized: string): boolean {
  if (normalized.length < 10) return true;
  if (!/[A-Za-z0-9]/.test(normalized)) return true;
  if (KEYWORD_ONLY.test(normalized)) return true;
  // Docstring and comment delimiters with little on them.
  return /^("""|'''|\/\*\*?|\*\/|\*|#|\/\/)\s*\W{0,3}$/.test(normalized);
}

/**
 * The distinct non-trivial lines the candidate's edits remove (in an original, absent from the new content).
 *
 * @example
 * removedCodeLines(candidate); // ['return Math.round(a + b);', …]
 */
export function removedCodeLines(candidate: Pick<Candidate, 'edits'>): string[] {
  const out = new Set<string>();
  for (const e of candidate.edits) {
    if (e.original === null) continue;
    const kept = new Set((e.content ?? '').split('\n').map(normalizeLine));
    for (const raw of e.original.split('\n')) {
      const line = normalizeLine(raw);
      if (!kept.has(line) && !isTrivialLine(line)) out.add(line);
    }
  }
  return [...out];
}

export interface Leak {
  /** The removed line (whitespace collapsed) found in the text. */
  line: string;
  reason: string;
}

/**
 * The removed lines a text contains. `allowed` lists text the agent may see anyway (signatures, doc comments, the
 * failing tests' source): lines found there are not leaks.
 *
 * @example
 * const leaks = findLeaks(statement, candidate, { allowed: candidate.context.signatures });
 * if (leaks.length) throw new Error(leaks[0].reason);
 */
export function findLeaks(text: string, candidate: Pick<Candidate, 'edits'>, options: { allowed?: string[] } = {}): Leak[] {
  const haystack = normalizeLine(text);
  const allowed = normalizeLine((options.allowed ?? []).join('\n'));
  const leaks: Leak[] = [];
  for (const line of removedCodeLines(candidate)) {
    if (allowed.includes(line)) continue;
    if (haystack.includes(line)) leaks.push({ line, reason: `the text contains a line of the removed code: "${line.length > 120 ? `${line.slice(0, 117)}...` : line}"` });
  }
  return leaks;
}
