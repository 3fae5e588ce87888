/**
 * The leakage check: a hint carries nothing the student could not have known. It fails on a hidden test's id or name,
 * a string or number literal of the hidden tests, a line of the reference (gold) patch, or a line of a file the agent
 * never saw (the hidden test files, the lines around the reference fix) — unless the student saw that very text
 * before the decision (`secrets.seen`: its tools, the messages and tool results before it).
 *
 * The secrets come from the task (`taskSecrets`): its fail-to-pass test ids, its test patch and its gold patch.
 */
import { extractLiterals, type Literal } from '../../harness/integrity/test-literals.ts';
import type { LeakageCheck } from '../schemas.ts';

/** What the student must not be told, gathered from the task, and what it saw (allowed). */
export interface HintSecrets {
  /** Hidden test ids (`tests/test_calc.py::test_add_negative`). */
  testIds: string[];
  /** Hidden test names (`test_add_negative`). */
  testNames: string[];
  /** String and number literals of the hidden tests. */
  testLiterals: Literal[];
  /** Lines the reference patch adds. */
  patchLines: string[];
  /** Lines of files the student may not have seen: the hidden test files', the reference fix's surroundings. */
  fileLines: string[];
  /** What the student saw before the decision; a secret that occurs in it is not a leak. */
  seen?: string;
  /** Set when the task's secrets could not be gathered (the task is not stored): a hint not written by code fails. */
  unavailable?: string;
}

export const EMPTY_SECRETS: HintSecrets = { testIds: [], testNames: [], testLiterals: [], patchLines: [], fileLines: [] };

/** A line shorter than this (non-space characters) is too common to point at the patch (`}`, `return x`). */
export const MIN_LINE_CHARS = 16;
/** A test name shorter than this is too common a word to count (`test`, `it`). */
export const MIN_TEST_NAME_CHARS = 6;

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();
const nonSpace = (s: string) => s.replace(/\s+/g, '').length;

/** Lines of a unified diff by kind, without their `+`/`-`/` ` mark (headers left out). */
function diffLines(patch: string): { added: string[]; removed: string[]; context: string[] } {
  const out = { added: [] as string[], removed: [] as string[], context: [] as string[] };
  for (const line of patch.split('\n')) {
    if (line.startsWith('+++') || line.startsWith('---') || line.startsWith('@@') || line.startsWith('diff ') || line.startsWith('index ')) continue;
    if (line.startsWith('+')) out.added.push(line.slice(1));
    else if (line.startsWith('-')) out.removed.push(line.slice(1));
    else if (line.startsWith(' ')) out.context.push(line.slice(1));
  }
  return out;
}

const meaningful = (lines: readonly string[]) => [...new Set(lines.map(squash).filter((l) => nonSpace(l) >= MIN_LINE_CHARS && /[A-Za-z0-9]/.test(l)))];

/** The last part of a test id: `a/b.py::TestX::test_y[1]` → `test_y`, `suite > does a thing` → `does a thing`. */
export function testNameOf(id: string): string {
  const last = id.split(/::| > |#/).pop() ?? id;
  return last.replace(/\[.*\]$/, '').trim();
}

/**
 * The secrets of a task as the registry stores it (any object with the task's fields).
 *
 * @example
 * const secrets = taskSecrets({ failToPass: ['tests/test_slug.py::test_unicode'], testPatch, goldPatch });
 */
export function taskSecrets(task: { failToPass?: unknown; testPatch?: unknown; goldPatch?: unknown }): HintSecrets {
  const ids = Array.isArray(task.failToPass) ? task.failToPass.filter((t): t is string => typeof t === 'string') : [];
  const testPatch = typeof task.testPatch === 'string' ? diffLines(task.testPatch) : { added: [], removed: [], context: [] };
  const gold = typeof task.goldPatch === 'string' ? diffLines(task.goldPatch) : { added: [], removed: [], context: [] };
  const definedTests = testPatch.added.flatMap((l) => [...l.matchAll(/\b(?:def|func|function)\s+(test\w*)|\b(?:it|test|describe)\(\s*(['"`])(.+?)\2/gi)].map((m) => m[1] ?? m[3] ?? ''));
  const names = [...new Set([...ids.map(testNameOf), ...definedTests])].filter((n) => n.length >= MIN_TEST_NAME_CHARS);
  return {
    testIds: ids,
    testNames: names,
    testLiterals: extractLiterals(testPatch.added.join('\n')),
    patchLines: meaningful(gold.added),
    fileLines: meaningful([...testPatch.added, ...testPatch.context, ...gold.removed, ...gold.context]),
  };
}

function clip(s: string): string {
  return s.length <= 200 ? s : `${s.slice(0, 200)}…`;
}

/**
 * @example
 * checkHintLeakage('Call run_tests, not pytest', secrets, new Date()); // { passed: true, findings: [], checkedAt }
 * checkHintLeakage('assert slug("Ünïcode") == "unicode"', secrets, now).passed; // false: a literal of the hidden test
 */
export function checkHintLeakage(hint: string, secrets: HintSecrets, now: Date, options: { byRule?: boolean } = {}): LeakageCheck {
  const text = squash(hint);
  const seen = squash(secrets.seen ?? '');
  const findings: LeakageCheck['findings'] = [];
  const leaks = (needle: string) => needle !== '' && text.includes(needle) && !seen.includes(needle);
  if (secrets.unavailable !== undefined && !options.byRule) findings.push({ kind: 'secrets-unavailable', text: clip(secrets.unavailable) });
  for (const id of secrets.testIds) if (leaks(squash(id))) findings.push({ kind: 'test-id', text: clip(id) });
  for (const name of secrets.testNames) {
    // A name counts as a word (`test_add` is not found inside `test_address`).
    const re = new RegExp(`(?<![\\w])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w])`);
    if (re.test(text) && !re.test(seen) && !findings.some((f) => f.kind === 'test-id' && f.text.includes(name))) findings.push({ kind: 'test-name', text: clip(name) });
  }
  for (const lit of secrets.testLiterals) {
    const value = lit.key.slice(2);
    const found = lit.key.startsWith('n:') ? new RegExp(`(?<![\\w.])${value.replace(/[.\-]/g, '\\$&')}(?![\\w.])`).test(text) && !seen.includes(value) : leaks(squash(value));
    if (found) findings.push({ kind: 'test-literal', text: clip(lit.text) });
  }
  for (const line of secrets.patchLines) if (leaks(line)) findings.push({ kind: 'reference-patch-line', text: clip(line) });
  for (const line of secrets.fileLines) if (leaks(line) && !findings.some((f) => f.text === clip(line))) findings.push({ kind: 'unseen-file-content', text: clip(line) });
  return { passed: findings.length === 0, findings, checkedAt: now.toISOString() };
}
