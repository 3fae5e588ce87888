/**
 * The statement without a model (or when every model draft failed its checks): the behaviour, not the edit. It names
 * the public entry point a user calls, quotes the first sentence of its documentation, shows its signature, and reads
 * each failing test's name as an expectation ("`format_filename` should shorten long paths (`tests/…`)"). It never
 * says what was removed or where, and never names private helpers or the edited files.
 */
import type { Candidate, CandidateStrategy, FailingTest } from '../candidate.ts';
import { docSentence } from './doc-sentence.ts';
import { escapeRegExp } from '../../shared/escape-reg-exp.ts';
import { statementSubject } from './statement-subject.ts';
import { expectationSentence, identifierWords, testIntent } from './test-intent.ts';

/** At most this many failing tests are read as expectations; the rest are counted. */
export const MAX_TEMPLATE_TESTS = 20;

export interface TemplateInput {
  /** Public names, the entry point first; empty when the candidate has none a user calls. */
  publicNames: string[];
  /** Their declaration heads. */
  signatures: string[];
  /** Doc comments / docstrings of what the user calls. */
  docComments: string[];
  tests: FailingTest[];
  strategy: CandidateStrategy | string;
  language: string;
}

const FENCE: Record<string, string> = { python: 'python', typescript: 'ts', javascript: 'js' };

function nameList(names: string[]): string {
  const shown = names.slice(0, 5).map((n) => `\`${n}\``);
  const more = names.length - shown.length;
  if (more > 0) return `${shown.join(', ')} and ${more} more`;
  return shown.length <= 1 ? (shown[0] ?? '') : `${shown.slice(0, -1).join(', ')} and ${shown.at(-1)}`;
}

function opening(input: TemplateInput, documented: boolean): string {
  const [entry] = input.publicNames;
  if (!entry) return 'Some behaviour of the library does not work: the tests below describe what a user expects from it.';
  if (input.strategy === 'file' || input.strategy === 'remove-file')
    return `Code that uses ${nameList(input.publicNames)} fails: ${input.publicNames.length > 1 ? 'they' : 'it'} should be available from the library and behave as described below.`;
  if (input.strategy === 'class') return `\`${entry}\` cannot be used: creating one and calling its methods fails, though users rely on the behaviour described below.`;
  return `Calling \`${entry}\` does not work: it should behave as ${documented ? 'its documentation and ' : ''}the tests below describe.`;
}

/** The public name a test is about: the one its `describe` / class names, or the first its source calls; else the entry point. */
function subjectOf(publicNames: string[], test: FailingTest, groups: string[]): string | undefined {
  const short = (n: string) => n.slice(n.lastIndexOf('.') + 1);
  const named = publicNames.find((n) => groups.some((g) => g.replace(/\s+/g, '').toLowerCase() === short(n).replace(/_/g, '').toLowerCase()));
  if (named || !test.body) return named ?? publicNames[0];
  let first: { name: string; at: number } | undefined;
  for (const n of publicNames) {
    const at = test.body.search(new RegExp(`(?<![\\w$])${escapeRegExp(short(n))}\\s*\\(`));
    if (at >= 0 && (!first || at < first.at)) first = { name: n, at };
  }
  return first?.name ?? publicNames[0];
}

/**
 * The template statement from plain facts (what certification has for a candidate without a parser, too).
 *
 * @example
 * templateStatementFrom({ publicNames: ['area'], signatures: ['def area(r: float) -> float:'], docComments: ['Area of a circle.'],
 *   tests: [{ id: 'tests/test_shapes.py::test_area_of_unit_circle' }], strategy: 'function-body', language: 'python' });
 */
export function templateStatementFrom(input: TemplateInput): string {
  const docs = [...new Set(input.docComments.map(docSentence).filter((d): d is string => d !== undefined))].slice(0, 3);
  const parts = [opening(input, docs.length > 0)];
  if (docs.length === 1) parts.push(`Its documentation says: "${docs[0]}"`);
  else if (docs.length > 1) parts.push(`What the documentation says:\n${docs.map((d) => `- "${d}"`).join('\n')}`);
  if (input.signatures.length) {
    // A class's members are shown inside it.
    const [head, ...members] = input.signatures;
    const lines = input.strategy === 'class' ? [head!, ...members.map((m) => `    ${m}`)] : input.signatures;
    parts.push(`\`\`\`${FENCE[input.language] ?? ''}\n${lines.join('\n')}\n\`\`\``);
  }
  if (input.tests.length) {
    const shown = input.tests.slice(0, MAX_TEMPLATE_TESTS).map((t) => {
      const intent = testIntent(t.id);
      const name = subjectOf(input.publicNames, t, intent.groups);
      const sentence = expectationSentence(intent, name ? `\`${name}\`` : 'It', name ? identifierWords(name.slice(name.lastIndexOf('.') + 1)) : '');
      return sentence.includes(`\`${t.id}\``) ? `- ${sentence}` : `- ${sentence} (\`${t.id}\`)`;
    });
    if (input.tests.length > shown.length) shown.push(`- … and ${input.tests.length - shown.length} more failing tests`);
    parts.push(`Expected behaviour, from the tests that fail now:\n${shown.join('\n')}`);
  }
  parts.push('Make these tests pass without changing them; every other test must keep passing.');
  return parts.join('\n\n');
}

/**
 * The template statement of a candidate.
 *
 * @example
 * templateStatement(candidate, [{ id: 'tests/test_utils.py::test_shortens_long_paths' }]);
 * // 'Calling `format_filename` does not work: … - `format_filename` should shorten long paths (`tests/…`) …'
 */
export function templateStatement(candidate: Candidate, tests: FailingTest[]): string {
  const subject = statementSubject(candidate);
  return templateStatementFrom({
    publicNames: subject.publicNames,
    signatures: subject.publicSignatures,
    docComments: subject.publicNames.length > 0 ? candidate.context.docComments : [],
    tests,
    strategy: candidate.strategy,
    language: candidate.language,
  });
}

const LANGUAGE_OF_EXTENSION: Record<string, string> = { '.py': 'python', '.ts': 'typescript', '.tsx': 'typescript', '.mts': 'typescript', '.cts': 'typescript', '.js': 'javascript', '.jsx': 'javascript', '.mjs': 'javascript', '.cjs': 'javascript' };

/**
 * The template for a candidate certification knows only by its symbols and edits (a file-level candidate, or the
 * fallback when a statement writer failed): the public names among the symbols (`calc.ts#add` → `add`; a path names
 * none), no signature, and the failing tests as expectations.
 *
 * @example
 * forgeTemplateStatement({ symbols: ['src/calc.ts#add'], edits: [{ path: 'src/calc.ts' }], strategy: 'function-body' }, ['test/calc.test.ts > adds']);
 * // 'Calling `add` does not work: … - `add` should add (`test/calc.test.ts > adds`) …'
 */
export function forgeTemplateStatement(candidate: { symbols: string[]; edits: Array<{ path: string }>; strategy: string }, failToPass: string[]): string {
  const publicNames = candidate.symbols
    .filter((s) => s.includes('#'))
    .map((s) => s.slice(s.indexOf('#') + 1))
    .filter((name) => !name.split('.').some((part) => part.startsWith('_') && !/^__\w+__$/.test(part)));
  const path = candidate.edits[0]?.path ?? '';
  return templateStatementFrom({ publicNames, signatures: [], docComments: [], tests: failToPass.map((id) => ({ id })), strategy: candidate.strategy, language: LANGUAGE_OF_EXTENSION[path.slice(path.lastIndexOf('.'))] ?? '' });
}
