/**
 * What the statement model is told about a candidate: the public API, its signatures and docs, and the failing tests
 * with their source. Never the removed bodies, the private helpers or the edited files: the prompt is built only from
 * `candidate.context` and the tests. The quality judge, which the agent never sees, is told what was removed
 * (`removalSummary`).
 */
import type { Candidate, FailingTest } from '../candidate.ts';
import { statementSubject } from './statement-subject.ts';

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
  'You write the issue a user of a software library files on its tracker: a feature request or a bug report. The library is missing the behaviour that the maintainers\' tests below check; a developer will implement it from your issue.',
  'Write as that user: what they tried (the public API they call, by name), what they expected, and what happens instead (the call fails or the behaviour is missing). Draw the expected behaviour from the tests\' intent: inputs, results, errors and edge cases, described in words.',
  'Rules: name only the public API a user calls; never name private helpers or the library\'s source files; never say that code was removed, deleted or stubbed, nor where; never write or sketch the implementation; never copy literal values or strings from the tests (say "an empty string", "a rounded total", "the shortened path" instead); do not refer to the tests themselves.',
  'Answer with the issue only: a one-line title, a blank line, then the body in plain prose (Markdown allowed), under 250 words.',
].join('\n');

/** The user message for the statement model: the public API, its docs and the failing tests; never the removed bodies, private helpers or file paths. */
export function statementPrompt(candidate: Candidate, tests: FailingTest[]): string {
  const subject = statementSubject(candidate);
  const parts = [
    subject.publicNames.length
      ? `## Public API the user calls\n${subject.publicNames.map((n) => `- \`${n}\``).join('\n')}`
      : '## Public API the user calls\n(not known: describe the behaviour through what the tests call)',
    `Language: ${candidate.language}. ${candidate.strategy === 'file' || candidate.strategy === 'class' ? 'A whole feature is missing: write a feature request.' : 'One operation misbehaves: write a bug report.'}`,
  ];
  if (subject.publicSignatures.length) parts.push(`## Signatures\n\`\`\`\n${subject.publicSignatures.join('\n')}\n\`\`\``);
  if (subject.publicNames.length && candidate.context.docComments.length) parts.push(`## Documentation\n${candidate.context.docComments.join('\n\n')}`);
  parts.push(`## Tests that fail now (what the user wants)\n${testList(tests, true) || '(none given)'}`);
  parts.push('Write the issue.');
  return parts.join('\n\n');
}
