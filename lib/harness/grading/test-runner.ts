/**
 * How grading runs the test command: through a `TestRunner` the caller picks, so the tests (which execute the
 * agent's code) can run inside a sandbox. `runTestsLocally` is the default: a child process in the prepared tree,
 * with a timeout that kills its whole process group. It is not isolation — `sandboxTestRunner` is.
 *
 * Every runner gets a script that starts with `gradingPrelude`: it points `FLYWHEEL_REPORT_DIR` at a fresh
 * directory in the tree and asks pytest (via `PYTEST_ADDOPTS`) for a JUnit report there, plus `-rA` summary lines
 * as a fallback. Commands of other runners write their report there themselves, e.g.
 * `npx vitest run --reporter=json --outputFile=$FLYWHEEL_REPORT_DIR/vitest.json` or
 * `go test -json ./... > $FLYWHEEL_REPORT_DIR/go.json` (go test -json and vitest/jest JSON on stdout are read too).
 */
import { spawn } from 'node:child_process';
import { glob, lstat, readFile, realpath } from 'node:fs/promises';
import { join, relative } from 'node:path';
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
    `export FLYWHEEL_REPORT_DIR="$PWD"/${shellQuote(reportDir)}`,
    'mkdir -p "$FLYWHEEL_REPORT_DIR"',
    `export PYTEST_ADDOPTS="-rA --junitxml=$FLYWHEEL_REPORT_DIR/${PYTEST_JUNIT_FILE} -o junit_family=xunit1 -p no:cacheprovider"`,
    'export NO_COLOR=1 FORCE_COLOR=0 PYTHONDONTWRITEBYTECODE=1 CI=true',
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

/**
 * Runs the script with bash in the tree; kills the process group at the timeout and again after the script ends
 * (so a background process cannot rewrite a report afterwards).
 *
 * @example
 * const result = await gradeAttempt({ task, sourceDir, diff, attemptId, runTests: makeLocalTestRunner({ env: { PYTHONPATH: 'src' } }) });
 */
export function makeLocalTestRunner(options: { env?: Record<string, string> } = {}): TestRunner {
  return async (req) => {
    const t0 = Date.now();
    const run = await new Promise<Omit<TestRunOutput, 'reports' | 'workdir' | 'durationMs'>>((resolve, reject) => {
      const child = spawn('bash', ['-c', req.script], { cwd: req.dir, env: gradingEnv(options.env), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let outBytes = 0;
      let errBytes = 0;
      let truncated = false;
      let timedOut = false;
      const keep = (chunks: Buffer[], size: number, chunk: Buffer): number => {
        const room = req.outputBytes - size;
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
      }, req.timeoutMs);
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
    return { ...run, durationMs: Date.now() - t0, reports: await collectReportFiles(req.dir, req.reportGlobs), workdir: req.dir };
  };
}

/** The default runner: `makeLocalTestRunner()`. */
export const runTestsLocally: TestRunner = makeLocalTestRunner();
