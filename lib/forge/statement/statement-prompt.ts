/**
 * What the statement writer (a model, or the template) is told about a candidate: the removed symbols' signatures
 * and docs, the failing tests, the files involved. Never the removed bodies: the prompt is built only from
 * `candidate.context`, the paths, and the tests.
 */
import type { Candidate, FailingTest } from '../candidate.ts';

export function failingTestsOf(tests: Array<string | FailingTest>): FailingTest[] {
  return tests.map((t) => (typeof t === 'string' ? { id: t } : t));
}

/** At most this many failing tests are listed, and their sources shown up to this many characters in all. */
export const MAX_LISTED_TESTS = 20;
export const MAX_TEST_SOURCE_CHARS = 12_000;

export function testList(tests: FailingTest[], withBodies: boolean): string {
  let budget = MAX_TEST_SOURCE_CHARS;
  const shown = tests.slice(0, MAX_LISTED_TESTS).map((t) => {
    if (!withBodies || !t.body || t.body.length > budget) return `- ${t.id}`;
    budget -= t.body.length;
    return `### ${t.id}\n\`\`\`\n${t.body}\n\`\`\``;
  });
  if (tests.length > shown.length) shown.push(`- … and ${tests.length - shown.length} more`);
  return shown.join('\n');
}

/** Names as a reader says them: `add`, `Counter.add`, a file path for file removal. */
export function symbolNames(candidate: Pick<Candidate, 'symbols'>): string[] {
  return candidate.symbols.map((s) => s.split('#')[1] ?? s);
}

/** Where the symbols live: the file(s) the candidate edits (for `file`, the deleted one first). */
export function primaryFiles(candidate: Pick<Candidate, 'edits' | 'strategy' | 'symbols'>): string[] {
  if (candidate.strategy === 'file') return candidate.edits.filter((e) => e.content === null).map((e) => e.path);
  return [...new Set(candidate.symbols.map((s) => s.split('#')[0]!))];
}

/** One sentence on what was removed, per strategy. */
export function removalSummary(candidate: Pick<Candidate, 'edits' | 'strategy' | 'symbols'>): string {
  const names = symbolNames(candidate).map((n) => `\`${n}\``);
  const files = primaryFiles(candidate).map((f) => `\`${f}\``).join(', ');
  switch (candidate.strategy) {
    case 'function-body':
      return `The body of ${names[0]} in ${files} has been replaced by a "not implemented" error; its signature is unchanged.`;
    case 'class':
      return `The class ${names[0]} in ${files} has been reduced to a stub: its constructor and public methods throw a "not implemented" error, and its private state and helpers are gone.`;
    case 'function-group':
      return `The related functions ${names.join(', ')} in ${files} have been removed: the public ones keep their signatures with a "not implemented" body, private helpers are gone entirely.`;
    case 'file': {
      const importers = candidate.edits.filter((e) => e.content !== null).map((e) => `\`${e.path}\``);
      return `The module ${files} has been deleted${importers.length ? `, and its imports were removed from ${importers.join(', ')}` : ''}.`;
    }
  }
}

export const STATEMENT_SYSTEM_PROMPT = [
  'You write the task statement for a coding exercise. A feature was removed from a working repository and an engineer must rebuild it so that the failing tests pass again without breaking the others.',
  'Describe what the missing code must do: its purpose, behaviour, inputs and outputs, errors and edge cases the tests check.',
  'Name the functions, classes, files and signatures involved. Do NOT write the implementation, code of it, or step-by-step pseudo-code.',
  'Answer with the statement only, in plain prose (Markdown allowed), under 300 words.',
].join('\n');

/** The user message for the statement model. */
export function statementPrompt(candidate: Candidate, tests: FailingTest[]): string {
  const parts = [`## What was removed\n${removalSummary(candidate)}`, `Language: ${candidate.language}. Strategy: ${candidate.strategy}.`];
  if (candidate.context.signatures.length) parts.push(`## Signatures\n\`\`\`\n${candidate.context.signatures.join('\n')}\n\`\`\``);
  if (candidate.context.docComments.length) parts.push(`## Documentation of the removed code\n${candidate.context.docComments.join('\n\n')}`);
  parts.push(`## Tests that fail now\n${testList(tests, true) || '(none given)'}`);
  if (candidate.context.relatedTests?.length) parts.push(`## Test files that reach this code\n${candidate.context.relatedTests.map((t) => `- ${t}`).join('\n')}`);
  parts.push('Write the task statement.');
  return parts.join('\n\n');
}

/** The deterministic statement used without a model (or when every model draft was rejected). */
export function templateStatement(candidate: Candidate, tests: FailingTest[]): string {
  const parts = [removalSummary(candidate), 'Implement the missing code so that the failing tests below pass and every other test keeps passing. Do not change the tests.'];
  if (candidate.context.signatures.length) parts.push(`Signatures to implement:\n\`\`\`\n${candidate.context.signatures.join('\n')}\n\`\`\``);
  if (candidate.context.docComments.length) parts.push(`What the documentation says:\n${candidate.context.docComments.join('\n\n')}`);
  if (tests.length) parts.push(`Failing tests:\n${testList(tests, false)}`);
  return parts.join('\n\n');
}
