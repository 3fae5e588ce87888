/**
 * Turns what a test run left behind into reports: report files first (recognised by content: XML → JUnit, a JSON
 * object with `testResults` → vitest/jest, JSON lines with `Action` → go test), then the command's stdout (a
 * vitest/jest JSON report, or go test -json events). pytest's `-rA` summary in the output is read only when
 * nothing structured was found: report files are the source of truth, printed text is the last resort.
 */
import { findJestJsonInOutput, isJestJson, parseJestJson } from './parse-jest-json.ts';
import { looksLikeGoTestJson, parseGoTestJson } from './parse-go-test-json.ts';
import { parseJunitXml } from './parse-junit-xml.ts';
import { parsePytestSummary } from './parse-pytest-summary.ts';
import type { TestReport } from './test-report.ts';

export interface ReportFile {
  /** Name relative to the report directory (or the repository, for a task's own report globs). */
  name: string;
  content: string;
}

/** One report from a file's content, or undefined with the reason when it is no report we know. */
export function parseReportFile(file: ReportFile, workdir?: string): { report?: TestReport; problem?: string } {
  const text = file.content.replace(/^\uFEFF/, '');
  const head = text.trimStart();
  try {
    if (head.startsWith('<')) return { report: parseJunitXml(text, file.name) };
    if (head.startsWith('{')) {
      try {
        const value = JSON.parse(text) as unknown;
        if (isJestJson(value)) return { report: parseJestJson(value, { source: file.name, ...(workdir !== undefined ? { workdir } : {}) }) };
      } catch {
        /* JSON lines, not one object */
      }
    }
    // go test -json output may start with non-JSON lines (`FAIL pkg [build failed]`).
    if (looksLikeGoTestJson(text)) return { report: parseGoTestJson(text, file.name) };
  } catch (error) {
    return { problem: `${file.name}: ${(error as Error).message}` };
  }
  return { problem: `${file.name}: not a report format we read` };
}

/**
 * All reports from a run: files, then stdout; problems lists files that could not be read as a report.
 *
 * @example
 * const { reports } = readTestReports({ files, stdout: run.stdout, workdir: run.workdir });
 */
export function readTestReports(input: { files: ReportFile[]; stdout: string; workdir?: string }): { reports: TestReport[]; problems: string[] } {
  const reports: TestReport[] = [];
  const problems: string[] = [];
  for (const f of input.files) {
    const { report, problem } = parseReportFile(f, input.workdir);
    if (report) reports.push(report);
    if (problem) problems.push(problem);
  }
  const jest = findJestJsonInOutput(input.stdout);
  if (jest !== undefined) reports.push(parseJestJson(jest, { source: 'stdout', ...(input.workdir !== undefined ? { workdir: input.workdir } : {}) }));
  else if (looksLikeGoTestJson(input.stdout)) reports.push(parseGoTestJson(input.stdout, 'stdout'));
  if (reports.length === 0) {
    const summary = parsePytestSummary(input.stdout);
    if (summary) reports.push(summary);
  }
  return { reports, problems };
}
