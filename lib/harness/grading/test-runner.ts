/**
 * How grading runs the test command: through a `TestRunner` the caller picks, so the tests (which execute the
 * agent's code) can run inside a sandbox. `runTestsLocally` is the default: a child process in the prepared tree,
 * with a timeout that kills its whole process group. It is not isolation — `sandboxTestRunner` is.
 *
 * Every runner gets a script that starts with `gradingPrelude`: it points `FLYWHEEL_REPORT_DIR` at a fresh
 * directory in the tree — a shell variable of the script, NOT exported, so the code under test cannot find it in its
 * environment — and asks pytest (via `PYTEST_ADDOPTS`, for pytest started by a script of the task) for a JUnit report
 * there, plus `-rA` summary lines as a fallback, and keeps Python off any bytecode cache in the tree
 * (`PYTHONDONTWRITEBYTECODE`, a `PYTHONPYCACHEPREFIX` that cannot exist). pytest started from the command line itself runs through the
 * isolated launcher and its result stream instead (`pytest-stream.ts`), which reads a nonce from the request's stdin. Commands of other runners write their report there themselves, e.g.
 * `npx vitest run --reporter=json --outputFile=$FLYWHEEL_REPORT_DIR/vitest.json` or
 * `go test -json ./... > $FLYWHEEL_REPORT_DIR/go.json` (go test -json and vitest/jest JSON on stdout are read too).
 */
import { spawn } from 'node:child_process';
import { glob, lstat, readFile, realpath } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { GradingSetupError } from './grading-setup-error.ts';
import type { ReportFile } from './read-test-reports.ts';

export interface TestRunRequest {
  /** Absolute path of the prepared tree (pristine base + agent's diff, tests reverted). */
  dir: string;
  /** The task's test command, as written in the task (for logs). */
  command: string;
  /** What to run with bash, cwd = the tree's root: `gradingPrelude(reportDir)` followed by the command. */
  script: string;
  /** The report directory, relative to the tree. */
  reportDir: string;
  /** Globs, relative to the tree, of the files to hand back as reports (`<reportDir>/*` and the task's own). */
  reportGlobs: string[];
  timeoutMs: number;
  /** Bytes of stdout+stderr kept (each stream is cut at this size). */
  outputBytes: number;
  /**
   * The task's setup command, run in the tree before the script (no grading prelude); a setup that fails or runs out
   * of time throws `Flywheel.GradingSetupError` — the task's environment, never the model's failure.
   */
  setup?: { command: string; timeoutMs: number };
  /** Given to the script on stdin (the pytest stream's nonce); never in the environment. */
  stdin?: string;
}

export interface TestRunOutput {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  truncated: boolean;
  durationMs: number;
  /** The files matching `reportGlobs`, read after the command ended. */
  reports: ReportFile[];
  /** Absolute path the command ran in (differs from `dir` inside a sandbox); report paths are made relative to it. */
  workdir: string;
}

export type TestRunner = (request: TestRunRequest) => Promise<TestRunOutput>;

/** Name of the JUnit file pytest is asked to write into the report directory. */
export const PYTEST_JUNIT_FILE = 'pytest-junit.xml';

function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * Shell lines that prepare the environment of a graded run (cwd must be the tree's root).
 *
 * @example
 * const script = `${gradingPrelude('.flywheel-grading-1a2b')}\n${task.testCommand}`;
 */
export function gradingPrelude(reportDir: string): string {
  return [
    `FLYWHEEL_REPORT_DIR="$PWD"/${shellQuote(reportDir)}`,
    'mkdir -p "$FLYWHEEL_REPORT_DIR"',
    `export PYTEST_ADDOPTS="-rA --junitxml=$FLYWHEEL_REPORT_DIR/${PYTEST_JUNIT_FILE} -o junit_family=xunit1 -p no:cacheprovider"`,
    'export NO_COLOR=1 FORCE_COLOR=0 PYTHONDONTWRITEBYTECODE=1 CI=true',
    // Python started outside the isolated launcher reads its bytecode caches from a place that cannot exist, never
    // from a `__pycache__` in the tree (nor writes any): the tree's sources are what runs.
    'export PYTHONPYCACHEPREFIX=/dev/null/flywheel-no-pycache',
  ].join('\n');
}

/** Variables that carry credentials or steer git; the graded code never sees them. */
const SECRET_ENV = /^(?:AWS_|GIT_|NPM_TOKEN|GH_|GITHUB_)|TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|CREDENTIAL|PRIVATE_KEY/i;

/** The environment for a local run: this process's, less credentials, plus `extra`. */
export function gradingEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!SECRET_ENV.test(k)) env[k] = v;
  return { ...env, ...extra };
}

const MAX_REPORT_BYTES = 64 * 1024 * 1024;

/** Reads the regular files under `dir` that match the globs (no symlink, nothing whose real path leaves `dir`). */
export async function collectReportFiles(dir: string, globs: string[]): Promise<ReportFile[]> {
  const root = await realpath(dir);
  const seen = new Set<string>();
  const files: ReportFile[] = [];
  for (const pattern of globs) {
    for await (const rel of glob(pattern, { cwd: dir })) {
      const name = relative(dir, join(dir, rel));
      if (seen.has(name) || name.startsWith('..')) continue;
      seen.add(name);
      const st = await lstat(join(dir, name)).catch(() => undefined);
      if (!st?.isFile() || st.size > MAX_REPORT_BYTES) continue;
      const real = await realpath(join(dir, name)).catch(() => '');
      if (!real.startsWith(`${root}/`)) continue;
      files.push({ name, content: await readFile(join(dir, name), 'utf8') });
    }
  }
  return files.sort((a, b) => a.name.localeCompare(b.name));
}

/** How a setup command ended, as one line for `GradingSetupError` (with the tail of its output). */
export function setupFailureMessage(run: { exitCode: number | null; signal: string | null; timedOut: boolean; stdout: string; stderr: string }): string | undefined {
  if (run.exitCode === 0 && !run.timedOut) return undefined;
  const how = run.timedOut ? 'ran out of time' : `exited ${run.exitCode ?? run.signal}`;
  return `grading setup command ${how}: ${`${run.stdout}\n${run.stderr}`.trim().slice(-1000)}`;
}

type BashRun = Omit<TestRunOutput, 'reports' | 'workdir' | 'durationMs'>;

/** Runs a bash script in `dir` in its own process group, killed at the timeout and again when the script ends. */
function runBash(dir: string, script: string, timeoutMs: number, outputBytes: number, env: NodeJS.ProcessEnv, stdin = ''): Promise<BashRun> {
  return new Promise<BashRun>((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd: dir, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.on('error', () => undefined);
    child.stdin.end(stdin);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let truncated = false;
    let timedOut = false;
    const keep = (chunks: Buffer[], size: number, chunk: Buffer): number => {
      const room = outputBytes - size;
      if (room <= 0) {
        truncated = true;
        return size;
      }
      if (chunk.length > room) truncated = true;
      const part = chunk.subarray(0, room);
      chunks.push(part);
      return size + part.length;
    };
    child.stdout.on('data', (c: Buffer) => (outBytes = keep(out, outBytes, c)));
    child.stderr.on('data', (c: Buffer) => (errBytes = keep(err, errBytes, c)));
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      killGroup();
      resolve({
        exitCode: code,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        timedOut,
        truncated,
      });
    });
  });
}

/**
 * Runs the task's setup command (when the request has one), then the script, with bash in the tree; kills the process
 * group at the timeout and again after the script ends (so a background process cannot rewrite a report afterwards).
 *
 * @example
 * const result = await gradeAttempt({ task, sourceDir, diff, attemptId, runTests: makeLocalTestRunner({ env: { PYTHONPATH: 'src' } }) });
 */
export function makeLocalTestRunner(options: { env?: Record<string, string> } = {}): TestRunner {
  return async (req) => {
    const t0 = Date.now();
    const env = gradingEnv(options.env);
    if (req.setup) {
      const failed = setupFailureMessage(await runBash(req.dir, req.setup.command, req.setup.timeoutMs, req.outputBytes, env));
      if (failed) throw new GradingSetupError(failed);
    }
    const run = await runBash(req.dir, req.script, req.timeoutMs, req.outputBytes, env, req.stdin);
    return { ...run, durationMs: Date.now() - t0, reports: await collectReportFiles(req.dir, req.reportGlobs), workdir: req.dir };
  };
}

/** The default runner: `makeLocalTestRunner()`. */
export const runTestsLocally: TestRunner = makeLocalTestRunner();
