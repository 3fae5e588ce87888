/**
 * Per-test outcomes as a runner reported them, in one shape for every report format. Grading reads outcomes from
 * these reports only: an exit code says nothing about which tests ran (`sys.exit(0)` in a conftest exits 0 with no
 * test run at all).
 */

/** What a runner said about one test. xfail counts as skipped, xpass as passed (as pytest's JUnit output does). */
export type TestOutcome = 'passed' | 'failed' | 'skipped' | 'error';

/** A graded test's outcome: `missing` when no report named it, which grading counts as not passed. */
export type GradedOutcome = TestOutcome | 'missing';

/** `pytest-stream`: the isolated launcher's per-phase lines (see `pytest-stream.ts`), the verdict's source for pytest. */
export type ReportFormat = 'junit-xml' | 'pytest-summary' | 'jest-json' | 'go-test-json' | 'pytest-stream';

export interface ReportedTest {
  /** The id in the runner's own notation (see `test-id.ts` for how ids are compared). */
  id: string;
  outcome: TestOutcome;
  /** First line of the failure or skip message, when the report gives one. */
  message?: string;
}

export interface TestReport {
  format: ReportFormat;
  /** Where it came from: a report file's name, or `stdout`. */
  source: string;
  tests: ReportedTest[];
  /** Tests the report counted but did not name (pytest's `SKIPPED [3] file:line` summary lines). */
  unnamed?: number;
}

const SEVERITY: Record<TestOutcome, number> = { passed: 0, skipped: 1, failed: 2, error: 3 };

/** The worse of two outcomes: a test reported twice passes only if every report says it passed. */
export function worseOutcome(a: TestOutcome, b: TestOutcome): TestOutcome {
  return SEVERITY[a] >= SEVERITY[b] ? a : b;
}

/** First non-empty line of a message, capped, for the result record. */
export function firstLine(text: string | undefined, max = 300): string | undefined {
  if (text === undefined) return undefined;
  const line = text.split('\n').find((l) => l.trim() !== '')?.trim();
  if (line === undefined) return undefined;
  return line.length > max ? `${line.slice(0, max)}…` : line;
}
