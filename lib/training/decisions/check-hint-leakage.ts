/**
 * The leakage check: a hint carries nothing the student could not have known. It fails on a hidden test's id or name
 * (also written as words: `adds negative numbers` for `adds_negative_numbers` or `addsNegativeNumbers`), a string or
 * number literal of the hidden tests (numbers by value), a line of the reference (gold) patch, an identifier or literal
 * that patch adds, a line of a file the agent never saw (the hidden test files, the lines the fix removes), or any
 * stretch of `MIN_SHARED_CHARS` characters shared with the reference patch's added lines or the hidden tests — unless
 * the student saw that very text before the decision (`secrets.seen`). Both sides are compared normalised (lower case,
 * whitespace collapsed).
 *
 * The secrets come from the task (`taskSecrets`): its fail-to-pass test ids, its test patch or test files, and its
 * gold patch. A record stores `LEAKAGE_CHECKER` and `secretsDigest(secrets)`: a record checked by an older checker or
 * against other secrets is checked again on the next extraction.
 */
import { createHash } from 'node:crypto';
import { parseUnifiedDiff } from '../../harness/integrity/unified-diff.ts';
import { extractLiterals, type Literal } from '../../harness/integrity/test-literals.ts';
import type { LeakageCheck } from '../schemas.ts';
import { escapeRegExp } from '../../shared/escape-reg-exp.ts';

/** The checker's version, stored on each verdict: a new version re-checks every stored record. */
export const LEAKAGE_CHECKER = 'flywheel.leakage/2';

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
  /** Identifiers and literals the reference patch adds (not in the lines it removes). */
  patchTokens?: string[];
  /** Lines of files the student may not have seen: the hidden test files', the lines the reference fix removes. */
  fileLines: string[];
  /** Texts no long stretch of which may appear in a hint: the reference patch's added lines, the hidden tests. */
  secretTexts?: string[];
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
/** Normalised characters a hint may share with a secret text before it counts as copied from it. */
export const MIN_SHARED_CHARS = 20;
/** Characters of secret text indexed for shared stretches at most (the rest is not compared). */
const MAX_SECRET_TEXT_CHARS = 4 * 1024 * 1024;

/** Lower case, whitespace collapsed: `Number(A)  +\nNumber(B)` and `number(a) + number(b)` compare equal. */
export const normalise = (s: string) => s.toLowerCase().replace(/\s+/g, ' ').trim();
const nonSpace = (s: string) => s.replace(/\s+/g, '').length;

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();
const meaningful = (lines: readonly string[]) => [...new Set(lines.map(squash).filter((l) => nonSpace(l) >= MIN_LINE_CHARS && /[A-Za-z0-9]/.test(l)))];

/** The last part of a test id: `a/b.py::TestX::test_y[1]` → `test_y`, `suite > does a thing` → `does a thing`. */
export function testNameOf(id: string): string {
  const last = id.split(/::| > |#/).pop() ?? id;
  return last.replace(/\[.*\]$/, '').trim();
}

/** The words of a test name: split on `_`, `-`, spaces and camelCase, lower case, a leading `test` dropped. */
export function testNameWords(name: string): string[] {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[\s_\-.]+/)
    .map((w) => w.toLowerCase())
    .filter((w) => w !== '');
  return words[0] === 'test' && words.length > 1 ? words.slice(1) : words;
}

/** Identifiers that look like code (`snake_case`, `camelCase`, with digits), not English words. */
const IDENTIFIER = /[A-Za-z_$][\w$]*/g;
const codeLike = (id: string) => id.length >= MIN_TEST_NAME_CHARS && (/_/.test(id.slice(1)) || /[a-z][A-Z]/.test(id) || /[A-Za-z]\d/.test(id));

/**
 * The secrets of a task as the registry stores it (any object with the task's fields), and the contents of its test
 * files when the hidden tests are files (Harbor's `tests/`) rather than a test patch.
 *
 * @example
 * const secrets = taskSecrets({ failToPass: ['tests/test_slug.py::test_unicode'], testPatch, goldPatch });
 * taskSecrets(harborTask, { 'tests/test_outputs.py': text }); // hidden test files given by content
 */
export function taskSecrets(task: { failToPass?: unknown; testPatch?: unknown; goldPatch?: unknown }, testFileContents: Readonly<Record<string, string>> = {}): HintSecrets {
  const ids = Array.isArray(task.failToPass) ? task.failToPass.filter((t): t is string => typeof t === 'string') : [];
  const testFiles = typeof task.testPatch === 'string' ? parseUnifiedDiff(task.testPatch) : [];
  const gold = typeof task.goldPatch === 'string' ? parseUnifiedDiff(task.goldPatch) : [];
  const testAdded = [...testFiles.flatMap((f) => f.added.map((l) => l.text)), ...Object.values(testFileContents).flatMap((t) => t.split('\n'))];
  const goldAdded = gold.flatMap((f) => f.added.map((l) => l.text));
  const goldRemoved = gold.flatMap((f) => f.removed.map((l) => l.text));
  const definedTests = testAdded.flatMap((l) => [...l.matchAll(/\b(?:def|func|function)\s+(test\w*)|\b(?:it|test|describe)\(\s*(['"`])(.+?)\2/gi)].map((m) => m[1] ?? m[3] ?? ''));
  const names = [...new Set([...ids.map(testNameOf), ...definedTests])].filter((n) => n.length >= MIN_TEST_NAME_CHARS);
  const removedText = goldRemoved.join('\n');
  const removedIds = new Set(removedText.match(IDENTIFIER) ?? []);
  const removedLiterals = new Set(extractLiterals(removedText).map((l) => l.key));
  const goldText = goldAdded.join('\n');
  const patchTokens = [
    ...new Set([
      ...(goldText.match(IDENTIFIER) ?? []).filter((id) => codeLike(id) && !removedIds.has(id)),
      ...extractLiterals(goldText)
        .filter((l) => !removedLiterals.has(l.key))
        .map((l) => l.key.slice(2)),
    ]),
  ];
  return {
    testIds: ids,
    testNames: names,
    testLiterals: extractLiterals(testAdded.join('\n')),
    patchLines: meaningful(goldAdded),
    patchTokens,
    fileLines: meaningful([...testAdded, ...goldRemoved]),
    secretTexts: [goldText, testAdded.join('\n')].map(normalise).filter((t) => t.length >= MIN_SHARED_CHARS),
  };
}

/**
 * A digest of what the secrets hold (not of what the student saw): a stored verdict against another digest is
 * checked again.
 *
 * @example
 * secretsDigest(taskSecrets(task)); // 'sha256:3f1c…' (16 hex)
 */
export function secretsDigest(secrets: HintSecrets): string {
  const { seen: _seen, ...rest } = secrets;
  return `sha256:${createHash('sha256').update(JSON.stringify(rest)).digest('hex').slice(0, 16)}`;
}

function clip(s: string): string {
  return s.length <= 200 ? s : `${s.slice(0, 200)}…`;
}

/** Numbers of a text by value (`-40_000_000`, `-40,000,000`, `-4e7` are one value). */
function numbersOf(text: string): Set<number> {
  const out = new Set<number>();
  for (const m of text.matchAll(/(?<![\w.])-?\d[\d_,]*(?:\.\d+)?(?:e[-+]?\d+)?(?![\w.])/gi)) {
    const value = Number(m[0].replace(/[_,]/g, ''));
    if (Number.isFinite(value)) out.add(value);
  }
  return out;
}

/** Windows of `MIN_SHARED_CHARS` characters of a text. */
function windows(text: string, into: Set<string> = new Set()): Set<string> {
  for (let i = 0; i + MIN_SHARED_CHARS <= text.length; i++) into.add(text.slice(i, i + MIN_SHARED_CHARS));
  return into;
}

/** The longest stretch of `hint` at `at` that occurs in `secret` (grown from a shared window). */
function grow(hint: string, at: number, secret: string): string {
  let end = at + MIN_SHARED_CHARS;
  while (end < hint.length && secret.includes(hint.slice(at, end + 1))) end++;
  return hint.slice(at, end);
}

/**
 * @example
 * checkHintLeakage('Call run_tests, not pytest', secrets, new Date()); // { passed: true, findings: [], checkedAt, checker, secretsDigest }
 * checkHintLeakage('assert slug("Ünïcode") == "unicode"', secrets, now).passed; // false: a literal of the hidden test
 */
export function checkHintLeakage(hint: string, secrets: HintSecrets, now: Date, options: { byRule?: boolean } = {}): LeakageCheck {
  const text = normalise(hint);
  const seen = normalise(secrets.seen ?? '');
  const findings: LeakageCheck['findings'] = [];
  const add = (kind: string, what: string) => {
    if (!findings.some((f) => f.text === clip(what))) findings.push({ kind, text: clip(what) });
  };
  const leaks = (needle: string) => needle !== '' && text.includes(needle) && !seen.includes(needle);
  if (secrets.unavailable !== undefined && !options.byRule) findings.push({ kind: 'secrets-unavailable', text: clip(secrets.unavailable) });
  for (const id of secrets.testIds) if (leaks(normalise(id))) add('test-id', id);
  for (const name of secrets.testNames) {
    // As a word (`test_add` is not in `test_address`), or as its words in order: `adds negative numbers`.
    const words = testNameWords(name);
    const pattern = words.length >= 2 ? words.map(escapeRegExp).join('[\\s_\\-]*') : escapeRegExp(name.toLowerCase());
    const re = new RegExp(`(?<![a-z0-9_])(?:test[\\s_\\-]*)?${pattern}(?![a-z0-9_])`);
    if (re.test(text) && !re.test(seen) && !findings.some((f) => f.kind === 'test-id' && f.text.includes(name))) add('test-name', name);
  }
  const hintNumbers = numbersOf(text);
  const seenNumbers = secrets.testLiterals.some((l) => l.key.startsWith('n:')) ? numbersOf(seen) : new Set<number>();
  for (const lit of secrets.testLiterals) {
    const value = lit.key.slice(2);
    const found = lit.key.startsWith('n:') ? hintNumbers.has(Number(value)) && !seenNumbers.has(Number(value)) : leaks(normalise(value));
    if (found) add('test-literal', lit.text);
  }
  for (const line of secrets.patchLines) if (leaks(normalise(line))) add('reference-patch-line', line);
  for (const token of secrets.patchTokens ?? []) {
    const t = normalise(token);
    const re = new RegExp(`(?<![a-z0-9_])${escapeRegExp(t)}(?![a-z0-9_])`);
    if (t !== '' && re.test(text) && !re.test(seen) && !findings.some((f) => normalise(f.text).includes(t))) add('reference-patch-token', token);
  }
  for (const line of secrets.fileLines) if (leaks(normalise(line))) add('unseen-file-content', line);
  if (text.length >= MIN_SHARED_CHARS && (secrets.secretTexts ?? []).length > 0) {
    let budget = MAX_SECRET_TEXT_CHARS;
    const secretWindows = new Set<string>();
    const texts: string[] = [];
    for (const s of secrets.secretTexts ?? []) {
      const part = s.slice(0, Math.max(0, budget));
      budget -= part.length;
      texts.push(part);
      windows(part, secretWindows);
    }
    let seenWindows: Set<string> | undefined;
    for (let i = 0; i + MIN_SHARED_CHARS <= text.length; i++) {
      const w = text.slice(i, i + MIN_SHARED_CHARS);
      if (!secretWindows.has(w)) continue;
      seenWindows ??= windows(seen);
      if (seenWindows.has(w)) continue;
      const stretch = grow(text, i, texts.find((s) => s.includes(w)) ?? '');
      // Already found as a line, a literal or a token: one finding says it.
      if (!findings.some((f) => normalise(f.text).includes(stretch.slice(0, MIN_SHARED_CHARS)) || stretch.includes(normalise(f.text)))) add('shared-secret-text', stretch);
      i += stretch.length - 1;
    }
  }
  return { passed: findings.length === 0, findings, checkedAt: now.toISOString(), checker: LEAKAGE_CHECKER, secretsDigest: secretsDigest(secrets) };
}
