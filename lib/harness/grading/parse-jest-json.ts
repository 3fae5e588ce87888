/**
 * The JSON report vitest (`--reporter=json`) and jest (`--json`) both write: `testResults[]`, one per file, each
 * with `assertionResults[]`. A test's id is `file > describe… > title`, the file relative to the directory the
 * runner ran in. `pending`, `skipped`, `todo` and `disabled` count as skipped. A file that failed to load has no
 * assertion results: its tests are simply not reported (so they are `missing` at grading).
 */
import { isAbsolute, relative } from 'node:path';
import { ValidationError } from '../../errors.ts';
import { firstLine, type ReportedTest, type TestOutcome, type TestReport } from './test-report.ts';

interface JestAssertion {
  ancestorTitles?: unknown;
  title?: unknown;
  fullName?: unknown;
  status?: unknown;
  failureMessages?: unknown;
}

interface JestFile {
  name?: unknown;
  testFilePath?: unknown;
  assertionResults?: unknown;
}

const STATUS: Record<string, TestOutcome> = {
  passed: 'passed',
  failed: 'failed',
  pending: 'skipped',
  skipped: 'skipped',
  todo: 'skipped',
  disabled: 'skipped',
  focused: 'passed',
};

/** True for a parsed value shaped like a vitest/jest JSON report. */
export function isJestJson(value: unknown): value is { testResults: unknown[] } {
  return value !== null && typeof value === 'object' && 'testResults' in value && Array.isArray(value.testResults);
}

/**
 * @param workdir the directory the runner ran in, to make file paths relative (they are absolute in the report).
 * @example
 * const report = parseJestJson(JSON.parse(text), { workdir: dir });
 */
export function parseJestJson(value: unknown, options: { workdir?: string; source?: string } = {}): TestReport {
  const source = options.source ?? 'report.json';
  if (!isJestJson(value)) throw new ValidationError(`${source} is not a vitest/jest JSON report (no testResults)`);
  const tests: ReportedTest[] = [];
  for (const f of value.testResults as JestFile[]) {
    const rawName = typeof f.name === 'string' ? f.name : typeof f.testFilePath === 'string' ? f.testFilePath : '';
    const file = options.workdir && isAbsolute(rawName) && rawName.startsWith(options.workdir) ? relative(options.workdir, rawName) : rawName;
    for (const a of (Array.isArray(f.assertionResults) ? f.assertionResults : []) as JestAssertion[]) {
      const ancestors = Array.isArray(a.ancestorTitles) ? a.ancestorTitles.filter((t): t is string => typeof t === 'string' && t !== '') : [];
      const title = typeof a.title === 'string' ? a.title : typeof a.fullName === 'string' ? a.fullName : '';
      const outcome = STATUS[typeof a.status === 'string' ? a.status : ''] ?? 'error';
      const message = Array.isArray(a.failureMessages) ? firstLine(a.failureMessages.filter((m) => typeof m === 'string').join('\n')) : undefined;
      tests.push({ id: [file, ...ancestors, title].filter((s) => s !== '').join(' > '), outcome, ...(message !== undefined ? { message } : {}) });
    }
  }
  return { format: 'jest-json', source, tests };
}

/**
 * Finds a vitest/jest JSON report in command output (vitest prints it to stdout when no `--outputFile` is given,
 * possibly after other lines): the longest tail starting at a line that begins with `{` that parses as one.
 */
export function findJestJsonInOutput(output: string): unknown {
  const trimmed = output.trim();
  if (trimmed === '') return undefined;
  const starts = [0];
  for (let i = trimmed.indexOf('\n{'); i >= 0; i = trimmed.indexOf('\n{', i + 1)) starts.push(i + 1);
  for (const s of starts) {
    if (trimmed[s] !== '{') continue;
    const end = trimmed.lastIndexOf('}');
    if (end < s) continue;
    try {
      const v = JSON.parse(trimmed.slice(s, end + 1)) as unknown;
      if (isJestJson(v)) return v;
    } catch {
      /* not this start */
    }
  }
  return undefined;
}
