/**
 * One run of a test command inside a sandbox session, read the way grading reads it: the harness's grading prelude
 * (report directory, pytest JUnit), then the report files and stdout through the harness's report parsers. The
 * per-test map is keyed by the harness's test-id key, so a test reported twice counts once, at its worst outcome.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { reportDirName } from '../harness/grading/prepare-grading-tree.ts';
import { readTestReports, type ReportFile } from '../harness/grading/read-test-reports.ts';
import { testIdKey } from '../harness/grading/test-id.ts';
import { collectReportFiles, gradingPrelude } from '../harness/grading/test-runner.ts';
import { worseOutcome, type TestOutcome, type TestReport } from '../harness/grading/test-report.ts';
import type { SandboxSession } from '../harness/sandbox/sandbox.ts';

export interface ReportedOutcome {
  /** The id as the runner reported it (what a task's failToPass / passToPass hold). */
  id: string;
  outcome: TestOutcome;
  message?: string;
}

export interface SuiteRun {
  /** By test-id key. */
  tests: Map<string, ReportedOutcome>;
  reports: TestReport[];
  /** The report files as read (for test → file maps). */
  files: ReportFile[];
  /** Where the command ran (report paths are relative to it). */
  workdir: string;
  problems: string[];
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  /** Command, exit and output, for the run's log blob. */
  log: string;
}

function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** The folder of a leading `cd <dir> &&` (plain, single- or double-quoted), whose prefix the paths lose. */
const LEADING_CD = /^\s*cd\s+(?:'([^']+)'|"([^"$`\\]+)"|([^\s'"&;|]+))\s*&&/;

/**
 * The filter command with `{files}` replaced by the quoted paths and `{dirs}` by their folders as `./dir` (go takes
 * packages, not files). Paths are repository-relative; a filter that starts with `cd <dir> &&` gets them relative to
 * that folder (a path already relative to it is kept).
 *
 * @example
 * fillFilter('cd web && npx vitest run {files}', ['web/test/a.test.ts']); // "cd web && npx vitest run 'test/a.test.ts'"
 * fillFilter('go test -json {dirs}', ['calc/add_test.go', 'calc/sub_test.go']); // "go test -json './calc'"
 */
export function fillFilter(template: string, files: readonly string[]): string {
  const cd = LEADING_CD.exec(template);
  const dir = (cd?.[1] ?? cd?.[2] ?? cd?.[3])?.replace(/^\.\//, '').replace(/\/+$/, '');
  const local = dir && dir !== '.' ? files.map((f) => (f.startsWith(`${dir}/`) ? f.slice(dir.length + 1) : f)) : [...files];
  const dirs = [...new Set(local.map((f) => (f.includes('/') ? `./${f.slice(0, f.lastIndexOf('/'))}` : '.')))].sort();
  return template.replaceAll('{files}', local.map(shellQuote).join(' ')).replaceAll('{dirs}', dirs.map(shellQuote).join(' '));
}

/**
 * @example
 * const run = await runSuite(session, { command: 'python -m pytest -q', timeoutMs: 600_000 });
 * for (const t of run.tests.values()) console.log(t.id, t.outcome);
 */
export async function runSuite(
  session: SandboxSession,
  input: { command: string; timeoutMs: number; reportGlobs?: readonly string[]; label?: string },
): Promise<SuiteRun> {
  const reportDir = reportDirName();
  const globs = [`${reportDir}/*`, ...(input.reportGlobs ?? [])];
  for (const g of input.reportGlobs ?? []) {
    // A report the tree shipped (or an earlier run left) must not be read as this run's.
    if (!/[*?[]/.test(g)) await rm(join(session.workdir, g), { force: true, recursive: true });
  }
  const script = `${gradingPrelude(reportDir)}\n${input.command}`;
  const r = await session.exec(script, { timeoutMs: input.timeoutMs });
  const files = await collectReportFiles(session.workdir, globs);
  await rm(join(session.workdir, reportDir), { recursive: true, force: true });
  const { reports, problems } = readTestReports({ files, stdout: r.stdout, workdir: session.workdir });
  const tests = new Map<string, ReportedOutcome>();
  for (const t of reports.flatMap((rep) => rep.tests)) {
    const key = testIdKey(t.id);
    if (key === '') continue;
    const prev = tests.get(key);
    const outcome = prev ? worseOutcome(prev.outcome, t.outcome) : t.outcome;
    const message = outcome === t.outcome ? (t.message ?? prev?.message) : prev?.message;
    tests.set(key, { id: prev?.id ?? t.id, outcome, ...(message !== undefined ? { message } : {}) });
  }
  const log = [
    `# ${input.label ?? 'suite run'}`,
    `command: ${input.command}`,
    `exit: ${r.exitCode ?? 'none'}${r.signal ? ` (signal ${r.signal})` : ''}${r.limit ? ` (${r.limit} limit)` : ''}; ${r.durationMs} ms`,
    `tests: ${tests.size}; reports: ${reports.map((x) => `${x.source} (${x.format})`).join(', ') || 'none'}`,
    ...problems.map((p) => `report problem: ${p}`),
    '--- stdout ---',
    r.stdout,
    '--- stderr ---',
    r.stderr,
    '',
  ].join('\n');
  return { tests, reports, files, workdir: session.workdir, problems, exitCode: r.exitCode, timedOut: r.limit === 'time', durationMs: r.durationMs, log };
}

/** Runs the setup command; returns an error line when it failed. */
export async function runSetup(session: SandboxSession, setupCommand: string | undefined, timeoutMs: number): Promise<string | undefined> {
  if (!setupCommand) return undefined;
  const r = await session.exec(setupCommand, { timeoutMs });
  if (r.exitCode === 0) return undefined;
  return `setup command exited ${r.exitCode ?? r.signal}${r.limit ? ` (${r.limit} limit)` : ''}: ${`${r.stdout}\n${r.stderr}`.trim().slice(-1000)}`;
}
