/**
 * Grades one attempt so that the score means the task was solved:
 * 1. a pristine copy of the base commit (never the agent's workspace) gets the agent's diff (`git apply`; a diff that
 *    does not apply fails with `patch-does-not-apply`);
 * 2. test files and runner configs the diff touched go back to the task's version, the test patch is applied;
 *    compiled bytecode and caches in the diff are never applied (`dropped`; one that would stand in for a source
 *    module — an unchecked-hash `.pyc`, a sourceless `.pyc`, an extension beside its `.py` — is a `runner-shadowing`
 *    flag, see `compiled-files.ts`), and the graded run reads no bytecode cache the tree holds;
 * 3. the task's setup command (if any) runs there, with the task's command time limit, then the test command, both
 *    through `runTests` (default: a local child process; `sandboxTestRunner` for isolation). pytest started from the
 *    command line runs through the isolated launcher (`python -I`, no shadowing module) and streams each test's
 *    outcome as it finishes over a channel the code cannot rewrite afterwards (`pytest-stream.ts`); other runners
 *    write reports into the report directory, which are read once, after the run's processes are gone;
 * 4. outcomes come from the stream (pytest) or the reports, never the exit code: every failToPass and passToPass id
 *    must be reported passed, a missing id is a failure, and fewer collected tests than expected fails the attempt.
 *    The stream is cross-checked against the JUnit files and pytest's own summary; any disagreement or tampering
 *    it saw fails the attempt as an integrity failure (`integrityFailed`), as do, in strict mode, the diff's flags
 *    aimed at the verdict (`VERDICT_TAMPERING_KINDS`). New test files the agent added are kept apart (`agentTests`);
 * 5. the test log is stored as a blob, and integrity flags are computed from the diff (and trajectory, if given).
 *
 * Infrastructure problems throw instead of grading: `Flywheel.GradingSetupError` (missing base commit, a test patch
 * that does not apply, a setup command that fails) and whatever the runner throws (a sandbox that will not start). Callers record those apart
 * and never score them as the model failing.
 */
import type { BlobsPort } from '../../ports/blobs.ts';
import type { Task } from '../task/task-schema.ts';
import type { Trajectory } from '../trajectory/trajectory-schema.ts';
import { detectIntegrityFlags } from '../integrity/detect-integrity-flags.ts';
import { detectTrajectoryFlags } from '../integrity/detect-trajectory-flags.ts';
import { evidenceText, VERDICT_TAMPERING_KINDS, type IntegrityFlag } from '../integrity/integrity-flag.ts';
import { checksOf, checksTestCommand, readCheckResults } from './checks-command.ts';
import type { DroppedFile } from './compiled-files.ts';
import { decideVerdict } from './decide-verdict.ts';
import { GradingSetupError } from './grading-setup-error.ts';
import { checkPytestStream, parsePytestStream, pytestStreamPrelude, type StreamCheck } from './pytest-stream.ts';
import { prepareGradingTree, reportDirName } from './prepare-grading-tree.ts';
import { readTestReports } from './read-test-reports.ts';
import { GRADE_RESULT_VERSION, type GradeResult } from './schemas.ts';
import { TestOutcomeIndex } from './test-id.ts';
import { isSectionedRunnerConfig } from './test-paths.ts';
import type { TestReport } from './test-report.ts';
import { git } from '../git/run-git.ts';
import { gradingPrelude, PYTEST_JUNIT_FILE, runTestsLocally, type TestRunner, type TestRunOutput } from './test-runner.ts';
import { randomBytes } from 'node:crypto';
import { glob, lstat, readFile, realpath, rm } from 'node:fs/promises';
import { join } from 'node:path';

export interface GradeAttemptInput {
  task: Task;
  /** The task's repository (git checkout or bare repo; plain files when the task has no commit). */
  sourceDir: string;
  /** Commit the attempt started from; defaults to the task's (`repo.commit` / `repo.baseCommit`), else HEAD. */
  baseCommit?: string;
  /** The agent's changes against the base commit (`SandboxSession.diff()`). */
  diff: string;
  attemptId: string;
  /** Runs the test command; default `runTestsLocally`. */
  runTests?: TestRunner;
  /** Where the test log goes (`grading/<attemptId>/test.log`). */
  blobs?: BlobsPort;
  /** Wall clock for the test command; default the task's `limits.commandSeconds`. */
  timeoutMs?: number;
  /** Wall clock for the task's setup command; default the task's `limits.commandSeconds`. */
  setupTimeoutMs?: number;
  /** Bytes of test output kept; default 32 MiB. */
  outputBytes?: number;
  /** Baseline number of tests the command collects; default `task.metadata.expectedTestCount`, else the count of the task's ids. */
  expectedCollected?: number;
  /** Test files the task ships outside the repository (path → content), written over the tree. */
  testFileContents?: Record<string, string | Uint8Array>;
  /** Extra report globs relative to the repository (e.g. `target/surefire-reports/*.xml`); default `task.metadata.reportGlobs`. */
  reportGlobs?: string[];
  /** The attempt's trajectory, for flags from its tool calls. */
  trajectory?: Pick<Trajectory, 'steps'>;
  /**
   * Strict grading (default true): the diff's flags aimed at the verdict (`VERDICT_TAMPERING_KINDS`) fail the attempt
   * as an integrity failure. Off (lenient mode), they are only recorded. Tampering the result stream catches fails
   * the attempt either way.
   */
  strict?: boolean;
}

/** `kind file:line` of a flag, for a reason line. */
function flagPlace(f: IntegrityFlag): string {
  return `${f.kind} ${f.file}${f.line !== null ? `:${f.line}` : ''}`;
}

/**
 * Reports of one run that contradict each other (one says a test passed, another that it failed or errored): the
 * stream against a report file the command wrote itself, a go test -json file against its stdout, a JUnit file
 * against a JSON one. Some writer other than the runner was at work; the verdict cannot be trusted.
 */
function reportDisagreements(reports: readonly TestReport[]): string[] {
  if (reports.length < 2) return [];
  const indexes = reports.map((r) => new TestOutcomeIndex(r.tests));
  const out: string[] = [];
  for (const [i, r] of reports.entries()) {
    for (const t of r.tests) {
      if (t.outcome !== 'passed') continue;
      for (const [j, other] of reports.entries()) {
        if (j === i) continue;
        const o = indexes[j]!.lookup(t.id);
        if (o === 'failed' || o === 'error') out.push(`report-disagreement: ${t.id} passed in ${r.source}, ${o} in ${other.source}`);
      }
    }
  }
  return out.length > 5 ? [...out.slice(0, 5), `report-disagreement: … ${out.length - 5} more`] : out;
}

/**
 * Integrity flags for what the verdict channel saw (source `grading`). Exit hooks count only when registered from a
 * file the diff touched: a repository's own hooks are not the agent's doing.
 */
function channelFlags(check: StreamCheck, touched: readonly string[]): IntegrityFlag[] {
  const flags: IntegrityFlag[] = check.integrity.map((problem) => ({ kind: 'verdict-channel', file: '(test run)', line: null, evidence: problem.slice(0, 200), source: 'grading' }));
  for (const note of check.notes) {
    const m = /^exit-hook:(.*)$/.exec(note);
    if (m && touched.includes(m[1]!)) flags.push({ kind: 'exit-hook', file: m[1]!, line: null, evidence: 'registered an exit hook during the graded run', source: 'grading' });
  }
  return flags;
}

/** A pytest node id (`tests/test_calc.py::test_add`, `tests/test_calc.py`). */
function isPytestId(id: string): boolean {
  return /\.py(?:::|$)/.test(id);
}

/**
 * Once a pytest session streamed, the task's pytest ids take their outcome from the stream ONLY: any other report's
 * entry for one of them is left out of the verdict, and one for an id the stream never named is a planted report (an
 * integrity failure). Entries for other ids (a go or vitest run of the same command) count as before.
 */
function streamOnly(check: StreamCheck, others: readonly TestReport[], pyIds: readonly string[]): { reports: TestReport[]; planted: string[] } {
  const fromStream = new TestOutcomeIndex(check.report.tests);
  const planted = new Set<string>();
  const reports = others.map((r) => ({
    ...r,
    tests: r.tests.filter((t) => {
      const one = new TestOutcomeIndex([t]);
      const claims = pyIds.filter((id) => one.lookup(id) !== 'missing');
      if (claims.length === 0 && !isPytestId(t.id)) return true;
      for (const id of claims) if (fromStream.lookup(id) === 'missing') planted.add(`report-planted: ${r.source} reports ${id}, which no pytest session ran`);
      if (claims.length === 0 && fromStream.lookup(t.id) === 'missing') planted.add(`report-planted: ${r.source} reports ${t.id}, which no pytest session ran`);
      return false;
    }),
  }));
  const list = [...planted];
  return { reports, planted: list.length > 5 ? [...list.slice(0, 5), `report-planted: … ${list.length - 5} more`] : list };
}

/**
 * Files in the report directory that no streamed session wrote: nothing but the launcher writes there unless the
 * task's command names `$FLYWHEEL_REPORT_DIR` (or pytest ran outside the launcher: `pytest-junit.xml`, read as before).
 */
function unexpectedReportFiles(files: readonly { name: string }[], reportDir: string, junitFiles: readonly string[], command: string): string[] {
  if (command.includes('FLYWHEEL_REPORT_DIR')) return [];
  return files
    .filter((f) => f.name.startsWith(`${reportDir}/`) && !junitFiles.includes(f.name) && f.name !== `${reportDir}/${PYTEST_JUNIT_FILE}`)
    .map((f) => `report-planted: ${f.name.slice(reportDir.length + 1)} appeared in the report directory, which only the pytest launcher writes`);
}

/** Of `files` (workspace-relative), those the base commit holds and the diff did not touch: the repository's own code. */
async function untouchedBaseFiles(sourceDir: string, baseCommit: string | undefined, touched: readonly string[], files: readonly string[]): Promise<Set<string>> {
  const out = new Set<string>();
  if (baseCommit === undefined) return out;
  for (const f of new Set(files)) {
    if (touched.includes(f) || f.startsWith('..') || f.startsWith('/')) continue;
    const r = await git(['cat-file', '-e', `${baseCommit}:${f}`], { cwd: sourceDir, allowFailure: true });
    if (r.code === 0) out.add(f);
  }
  return out;
}

/**
 * `dependency-edit` (review) for the dependency sections of pyproject.toml / package.json grading put back (the diff
 * flags requirement files and lockfiles by name; these files it flags as runner config).
 */
function dependencyFlags(reverted: GradeResult['reverted']): IntegrityFlag[] {
  return reverted
    .filter((r) => r.kind === 'dependency-manifest' && isSectionedRunnerConfig(r.path))
    .map((r) => ({ kind: 'dependency-edit' as const, file: r.path, line: null, evidence: 'changed the dependencies; graded with the base version', source: 'grading' as const }));
}

/** `runner-shadowing` flags for the dropped compiled files that would have stood in for a source module. */
function droppedFlags(dropped: readonly DroppedFile[]): IntegrityFlag[] {
  return dropped
    .filter((d) => d.shadowing)
    .map((d) => ({
      kind: 'runner-shadowing' as const,
      file: d.path,
      line: null,
      evidence: evidenceText(`${d.kind === 'extension-module' ? 'compiled extension module' : d.pyc === 'unchecked-hash' ? 'unchecked-hash bytecode' : 'sourceless bytecode'} that Python would load instead of ${d.shadows} (not applied)`),
      source: 'diff' as const,
    }));
}

/** At most this many dropped files are listed on a grade (shadowing ones first); the log names them all. */
const MAX_DROPPED_LISTED = 200;

function defaultBaseCommit(task: Task): string | undefined {
  if (task.repo.kind === 'git') return task.repo.commit;
  if (task.repo.kind === 'blob') return task.repo.baseCommit;
  return undefined;
}

function metadataNumber(task: Task, key: string): number | undefined {
  const v = task.metadata[key];
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;
}

function metadataStrings(task: Task, key: string): string[] {
  const v = task.metadata[key];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

const MAX_LITERAL_SOURCE_BYTES = 1024 * 1024;

async function readTestTexts(dir: string, paths: string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const p of paths) {
    const st = await lstat(join(dir, p)).catch(() => undefined);
    if (!st?.isFile() || st.size > MAX_LITERAL_SOURCE_BYTES) continue;
    const text = await readFile(join(dir, p), 'utf8');
    if (!text.includes('\0')) out[p] = text;
  }
  return out;
}

function renderLog(parts: { attemptId: string; task: Task; baseCommit?: string; applyMode: string; reverted: GradeResult['reverted']; agentTests?: string[]; dropped?: readonly DroppedFile[]; detail?: string; run?: TestRunOutput; reasons: string[] }): string {
  const lines = [
    `# flywheel grading log`,
    `attempt: ${parts.attemptId}`,
    `task: ${parts.task.id}`,
    `base: ${parts.baseCommit ?? '(plain files)'}`,
    `apply: ${parts.applyMode}`,
    ...parts.reverted.map((r) => `reverted: ${r.path} (${r.kind}, ${r.action})`),
    ...(parts.agentTests ?? []).map((p) => `agent test (kept apart, not run): ${p}`),
    ...(parts.dropped ?? []).map((d) => `not applied (${d.kind}${d.pyc ? `, ${d.pyc}` : ''}${d.shadowing ? `, would shadow ${d.shadows}` : ''}): ${d.path}`),
    `command: ${parts.task.testCommand}`,
  ];
  if (parts.detail) lines.push(`detail: ${parts.detail}`);
  if (parts.run) {
    lines.push(`exit: ${parts.run.exitCode ?? 'none'}${parts.run.signal ? ` (signal ${parts.run.signal})` : ''}; timed out: ${parts.run.timedOut}; ${parts.run.durationMs} ms${parts.run.truncated ? '; output truncated' : ''}`);
  }
  lines.push(`verdict: ${parts.reasons.length === 0 ? 'passed' : 'failed'}`, ...parts.reasons.map((r) => `reason: ${r}`));
  if (parts.run) lines.push('--- stdout ---', parts.run.stdout, '--- stderr ---', parts.run.stderr);
  return `${lines.join('\n')}\n`;
}

/**
 * @example
 * const result = await gradeAttempt({ task, sourceDir: repoDir, diff: await session.diff(), attemptId, blobs });
 * if (!result.passed) console.log(result.reasons); // ['fail-to-pass-not-passed: tests/test_calc.py::test_add (failed)']
 */
export async function gradeAttempt(input: GradeAttemptInput): Promise<GradeResult> {
  const t0 = Date.now();
  const { task } = input;
  // A task graded by a judge alone has no tests to run: grading it by tests is the caller's mistake, not the model's.
  if (task.testCommand === undefined) throw new GradingSetupError(`task ${task.id} has no testCommand (grading.by is '${task.grading?.by ?? 'tests'}'): it cannot be graded by tests`);
  // A checks task (`checksTestCommand`) runs this version's command, whatever form was stored, and its outcomes come
  // from the nonce-tagged result lines only (`readCheckResults`), never from a file the checked code could write.
  const checks = checksOf(task.testCommand);
  const testCommand = checks ? checksTestCommand(checks).testCommand : task.testCommand;
  const baseCommit = input.baseCommit ?? defaultBaseCommit(task);
  const prepared = await prepareGradingTree({
    sourceDir: input.sourceDir,
    ...(baseCommit !== undefined ? { baseCommit } : {}),
    diff: input.diff,
    testFiles: task.testFiles,
    ...(task.testPatch !== undefined ? { testPatch: task.testPatch } : {}),
    ...(input.testFileContents ? { testFileContents: input.testFileContents } : {}),
  });
  const tree = prepared.tree;
  const logKey = `grading/${input.attemptId}/test.log`;
  const storeLog = async (text: string) => {
    if (!input.blobs) return undefined;
    await input.blobs.put(logKey, text, { contentType: 'text/plain; charset=utf-8' });
    return logKey;
  };
  const expectedCollected = input.expectedCollected ?? metadataNumber(task, 'expectedTestCount');
  try {
    const taskTestFiles = [...new Set([...task.testFiles, ...tree.taskTestPaths])];
    const testTexts = prepared.ok ? await readTestTexts(tree.dir, tree.taskTestPaths) : {};
    const integrity: IntegrityFlag[] = [
      ...detectIntegrityFlags({ diff: input.diff, taskTestFiles, testFileContents: testTexts }),
      ...droppedFlags(tree.dropped),
      ...dependencyFlags(tree.reverted),
      ...(input.trajectory ? detectTrajectoryFlags(input.trajectory, { taskTestFiles }) : []),
    ];
    const strict = input.strict ?? true;
    const tampering = strict ? integrity.filter((f) => VERDICT_TAMPERING_KINDS.includes(f.kind)).map((f) => `integrity-flag: ${flagPlace(f)}`) : [];
    const common = {
      version: GRADE_RESULT_VERSION,
      attemptId: input.attemptId,
      taskId: task.id,
      ...(tree.baseCommit !== undefined ? { baseCommit: tree.baseCommit } : {}),
      reverted: tree.reverted,
      ...(tree.agentTests.length > 0 ? { agentTests: tree.agentTests } : {}),
      ...(tree.dropped.length > 0 ? { dropped: [...tree.dropped].sort((a, b) => Number(b.shadowing ?? false) - Number(a.shadowing ?? false)).slice(0, MAX_DROPPED_LISTED) } : {}),
      ...(tree.dropped.length > MAX_DROPPED_LISTED ? { droppedTotal: tree.dropped.length } : {}),
      integrity,
    };

    if (!prepared.ok) {
      const reasons = [`patch-does-not-apply: ${prepared.detail.split('\n')[0]}`, ...tampering];
      const perTest = Object.fromEntries([...task.failToPass, ...task.passToPass].map((id) => [id, 'missing' as const]));
      const key = await storeLog(renderLog({ attemptId: input.attemptId, task, ...(tree.baseCommit ? { baseCommit: tree.baseCommit } : {}), applyMode: 'failed', reverted: [], dropped: tree.dropped, detail: prepared.detail, reasons }));
      return {
        ...common,
        passed: false,
        reasons,
        ...(tampering.length > 0 ? { integrityFailed: true } : {}),
        perTest,
        collected: 0,
        expectedCollected: expectedCollected ?? Object.keys(perTest).length,
        counts: { passed: 0, failed: 0, skipped: 0, error: 0 },
        ...(key ? { logKey: key } : {}),
        applyMode: 'failed',
        reportFormats: [],
        reportProblems: [],
        exitCode: null,
        timedOut: false,
        durationMs: Date.now() - t0,
      };
    }

    const reportDir = reportDirName();
    const taskGlobs = input.reportGlobs ?? metadataStrings(task, 'reportGlobs');
    // A report file the diff left in the tree must not be read as this run's.
    const treeReal = await realpath(tree.dir);
    for (const pattern of taskGlobs) {
      for await (const stale of glob(pattern, { cwd: tree.dir })) {
        // Never through a symlink the diff planted: only paths whose parent really is inside the tree.
        const parent = await realpath(join(tree.dir, stale, '..')).catch(() => '');
        if (parent === treeReal || parent.startsWith(`${treeReal}/`)) await rm(join(tree.dir, stale), { force: true, recursive: true });
      }
    }
    const nonce = randomBytes(16).toString('hex');
    const run = await (input.runTests ?? runTestsLocally)({
      dir: tree.dir,
      command: testCommand,
      script: `${gradingPrelude(reportDir)}\n${pytestStreamPrelude()}\n${testCommand}`,
      stdin: `${nonce}\n`,
      reportDir,
      reportGlobs: [`${reportDir}/*`, ...taskGlobs],
      timeoutMs: input.timeoutMs ?? task.limits.commandSeconds * 1000,
      outputBytes: input.outputBytes ?? 32 * 1024 * 1024,
      ...(task.setupCommand ? { setup: { command: task.setupCommand, timeoutMs: input.setupTimeoutMs ?? task.limits.commandSeconds * 1000 } } : {}),
    });
    // The stream goes to stderr; a command that sends stderr elsewhere and prints it back (`2>&1 | tee log`) has it in
    // stdout. Lines without this run's nonce count for nothing (and are integrity failures).
    const sourced = checks ? checksOutcome({ checks, run, nonce, reportDir, integrity }) : await testsOutcome();
    const verdict = decideVerdict({
      failToPass: task.failToPass,
      passToPass: task.passToPass,
      reports: sourced.reports,
      ...(expectedCollected !== undefined ? { expectedCollected } : {}),
    });
    const channelProblems = sourced.channelProblems.map((p) => `verdict-integrity: ${p}`);
    const reasons = [...channelProblems, ...tampering, ...sourced.failures, ...verdict.reasons];
    if (run.timedOut) reasons.unshift(`test-command-timed-out: after ${run.durationMs} ms`);
    const integrityFailed = channelProblems.length > 0 || tampering.length > 0;
    const key = await storeLog(renderLog({ attemptId: input.attemptId, task, ...(tree.baseCommit ? { baseCommit: tree.baseCommit } : {}), applyMode: tree.applyMode, reverted: tree.reverted, agentTests: tree.agentTests, dropped: tree.dropped, run, reasons }));
    return {
      ...common,
      passed: reasons.length === 0,
      reasons,
      ...(integrityFailed ? { integrityFailed: true } : {}),
      perTest: verdict.perTest,
      collected: verdict.collected,
      expectedCollected: verdict.expectedCollected,
      counts: verdict.counts,
      ...(key ? { logKey: key } : {}),
      applyMode: tree.applyMode,
      reportFormats: [...new Set(sourced.reports.map((r) => r.format))],
      reportProblems: sourced.reportProblems,
      exitCode: run.exitCode,
      timedOut: run.timedOut,
      durationMs: Date.now() - t0,
      channel: sourced.channel,
    };

    /** The outcomes of a test run: pytest's result stream (cross-checked with the report files), else the reports. */
    async function testsOutcome(): Promise<SourcedOutcomes> {
      const stream = parsePytestStream(`${run.stderr}\n${run.stdout}`, nonce);
      const baseFiles = await untouchedBaseFiles(input.sourceDir, tree.baseCommit, tree.touched, stream.located.map((l) => l.file));
      const check = stream.sessions.length > 0 || stream.tamper.length > 0 ? checkPytestStream({ stream, files: run.reports, stdout: run.stdout, workdir: run.workdir, baseFiles }) : undefined;
      const others = readTestReports({ files: check ? run.reports.filter((f) => !check.junitFiles.includes(f.name)) : run.reports, stdout: run.stdout, workdir: run.workdir });
      const planted: string[] = [];
      const streamFailures: string[] = [];
      // With the stream, pytest's outcomes are the stream's; its printed summary is only a cross-check.
      const nonSummary = others.reports.filter((r) => r.format !== 'pytest-summary');
      const allReports = check ? [check.report, ...nonSummary] : others.reports;
      let reports = allReports;
      if (check && stream.sessions.length > 0) {
        const pyIds = [...new Set([...task.failToPass, ...task.passToPass])].filter(isPytestId);
        const sourced = streamOnly(check, nonSummary, pyIds);
        reports = [check.report, ...sourced.reports];
        planted.push(...sourced.planted);
        planted.push(...unexpectedReportFiles(run.reports, reportDir, check.junitFiles, testCommand));
        const ran = check.report.tests.length;
        if (pyIds.length > 0 && stream.sessions.every((s) => s.end) && ran < pyIds.length) {
          streamFailures.push(`collected-tests-dropped: the pytest sessions ran ${ran} test${ran === 1 ? '' : 's'}, the task names ${pyIds.length}`);
        }
      }
      const problems = [...others.problems, ...(check ? [] : testCommand.includes('pytest') ? ['pytest ran outside the isolated launcher: outcomes from report files, without the result stream'] : [])];
      if (check) integrity.push(...channelFlags(check, tree.touched));
      const disagreements = [...planted, ...reportDisagreements(allReports)];
      for (const problem of disagreements) integrity.push({ kind: 'verdict-channel', file: '(test run)', line: null, evidence: problem.slice(0, 200), source: 'grading' });
      return {
        reports,
        channelProblems: [...(check?.integrity ?? []), ...disagreements],
        failures: [...(check?.failures ?? []), ...streamFailures],
        reportProblems: problems,
        channel: check ? { kind: 'pytest-stream', sessions: stream.sessions.length, runners: check.runners } : { kind: 'reports', sessions: 0, runners: [] },
      };
    }
  } finally {
    await tree.cleanup();
  }
}

/** Where a test run's outcomes came from, and what the channel found: what the verdict is decided on. */
interface SourcedOutcomes {
  reports: TestReport[];
  /** Tampering the channel caught (each becomes a `verdict-integrity` reason). */
  channelProblems: string[];
  /** Failures of the channel that are not tampering (a pytest session that never ended, tests dropped). */
  failures: string[];
  reportProblems: string[];
  channel: GradeResult['channel'];
}

/**
 * The outcomes of a checks task: each check's outcome from its nonce-tagged result line (printed by the grading shell
 * after the last check), nothing else. Every file in the report directory is planted (a check's pytest run may leave
 * pytest's own JUnit file there; it is not read), as is a result line with another nonce: integrity failures.
 */
function checksOutcome(a: { checks: readonly string[]; run: TestRunOutput; nonce: string; reportDir: string; integrity: GradeResult['integrity'] }): SourcedOutcomes {
  const { run } = a;
  const results = readCheckResults(run.stderr, a.nonce, a.checks.length);
  const planted = [
    ...results.forged,
    ...run.reports
      .filter((f) => f.name.startsWith(`${a.reportDir}/`) && f.name !== `${a.reportDir}/${PYTEST_JUNIT_FILE}`)
      .map((f) => `report-planted: ${f.name.slice(a.reportDir.length + 1)} appeared in the report directory, which a checks task never writes`),
  ].slice(0, 6);
  for (const problem of planted) a.integrity.push({ kind: 'verdict-channel', file: '(test run)', line: null, evidence: problem.slice(0, 200), source: 'grading' });
  const report: TestReport = {
    format: 'junit-xml',
    source: 'checks-stream',
    tests: Object.entries(results.perTest)
      .filter(([, o]) => o !== 'missing')
      .map(([id, o]) => ({ id, outcome: o === 'passed' ? ('passed' as const) : ('failed' as const) })),
  };
  return { reports: [report], channelProblems: planted, failures: [], reportProblems: [], channel: { kind: 'reports', sessions: 0, runners: [] } };
}
