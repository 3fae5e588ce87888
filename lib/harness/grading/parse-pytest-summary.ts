/**
 * pytest's short test summary (`-rA`): the fallback when no JUnit XML was written. Weaker than a report file:
 * it is read from the output, which the code under test can print into too, so only the LAST summary section is
 * read (captured output is echoed before it), up to pytest's closing `=== … in 0.12s ===` line.
 *
 *     =========================== short test summary info ============================
 *     PASSED tests/test_calc.py::TestMore::test_zero
 *     SKIPPED [1] tests/test_calc.py:14: nope
 *     FAILED tests/test_calc.py::test_add - assert -1 == 5
 *     1 failed, 1 passed, 1 skipped in 0.78s
 */
import { firstLine, type ReportedTest, type TestOutcome, type TestReport } from './test-report.ts';

const HEADER = /^=+ short test summary info =+$/;
const CLOSING = /^(?:=+ )?.*\bin [\d.]+s(?: \([^)]*\))?(?: =+)?$/;
const LINE = /^(PASSED|FAILED|ERROR|XFAIL|XPASS|SKIPPED)\s+(.*)$/;
const SKIPPED_COUNT = /^\[(\d+)\]\s/;

const OUTCOME: Record<string, TestOutcome> = {
  PASSED: 'passed',
  XPASS: 'passed',
  FAILED: 'failed',
  ERROR: 'error',
  XFAIL: 'skipped',
  SKIPPED: 'skipped',
};

/** Splits `nodeid - message` at the first ` - ` outside `[params]`. */
function splitNodeId(rest: string): { id: string; message?: string } {
  let from = 0;
  for (;;) {
    const at = rest.indexOf(' - ', from);
    if (at < 0) return { id: rest.trim() };
    const head = rest.slice(0, at);
    const open = head.split('[').length - 1;
    const close = head.split(']').length - 1;
    if (open === close) {
      const message = firstLine(rest.slice(at + 3));
      return { id: head.trim(), ...(message !== undefined ? { message } : {}) };
    }
    from = at + 3;
  }
}

/**
 * Reads the last short-summary section of pytest output; undefined when there is none.
 *
 * @example
 * const report = parsePytestSummary(result.stdout);
 */
export function parsePytestSummary(output: string, source = 'stdout'): TestReport | undefined {
  const lines = output.split(/\r?\n/);
  let start = -1;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (HEADER.test(lines[i]!.trim())) {
      start = i;
      break;
    }
  }
  if (start < 0) return undefined;
  const tests: ReportedTest[] = [];
  let unnamed = 0;
  for (const raw of lines.slice(start + 1)) {
    const line = raw.trim();
    if (CLOSING.test(line) && !LINE.test(line)) break;
    const m = LINE.exec(line);
    if (!m) continue;
    const word = m[1]!;
    const rest = m[2]!;
    if (word === 'SKIPPED') {
      // `SKIPPED [N] file:line: reason` names a location, not a test.
      const count = SKIPPED_COUNT.exec(rest);
      if (count) {
        unnamed += Number(count[1]);
        continue;
      }
    }
    const { id, message } = splitNodeId(rest);
    if (id === '') continue;
    tests.push({ id, outcome: OUTCOME[word]!, ...(message !== undefined ? { message } : {}) });
  }
  return { format: 'pytest-summary', source, tests, ...(unnamed > 0 ? { unnamed } : {}) };
}
