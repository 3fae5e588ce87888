/**
 * Runs graded tests inside a sandbox: the prepared tree is the sandbox's source, the network is closed (strict mode,
 * empty allow-list unless given) and the process tree dies with the command. Report files are read back through the
 * session (base64, one file a line pair), since the sandbox works on its own copy of the tree. The task's setup command
 * (the request's `setup`, else `options.setupCommand`) runs in the same session first; one that fails throws
 * `Flywheel.GradingSetupError`. The forge grades with this same runner (`forgeTestRunner`).
 */
import { TransientError } from '../../errors.ts';
import type { SandboxLimits, SandboxProvider } from '../sandbox/sandbox.ts';
import type { ReportFile } from './read-test-reports.ts';
import { GradingSetupError } from './grading-setup-error.ts';
import { setupFailureMessage, type TestRunner } from './test-runner.ts';

function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** A bash snippet that prints `<name>\n<base64>\n` for each regular file matching the globs. */
function listReportsScript(globs: string[]): string {
  // Globs come from the grader and the task; each is matched by bash (globstar, nullglob) relative to the tree.
  const patterns = globs.map((g) => g.split('/').map((part) => (/[*?[]/.test(part) ? part : shellQuote(part))).join('/')).join(' ');
  return [
    'shopt -s globstar nullglob dotglob',
    `for f in ${patterns}; do`,
    '  if [ -f "$f" ] && [ ! -L "$f" ]; then printf "%s\\n" "$f"; base64 -w0 -- "$f"; printf "\\n"; fi',
    'done',
  ].join('\n');
}

function parseReportListing(stdout: string): ReportFile[] {
  const lines = stdout.split('\n');
  const files: ReportFile[] = [];
  const seen = new Set<string>();
  for (let i = 0; i + 1 < lines.length; i += 2) {
    const name = lines[i]!;
    if (name === '' || seen.has(name)) continue;
    seen.add(name);
    files.push({ name, content: Buffer.from(lines[i + 1]!, 'base64').toString('utf8') });
  }
  return files;
}

/**
 * @example
 * const runTests = sandboxTestRunner(new NamespaceSandboxProvider(), { limits: { commandTimeoutMs: 600_000, outputBytes: 32 << 20 } });
 * const result = await gradeAttempt({ task, sourceDir, diff, attemptId, runTests });
 */
export function sandboxTestRunner(
  provider: SandboxProvider,
  options: {
    limits?: Partial<SandboxLimits>;
    networkAllowList?: string[];
    env?: Record<string, string>;
    /** Setup run when the request carries none (a repository-wide setup, as the forge's spec names it). */
    setupCommand?: string;
  } = {},
): TestRunner {
  return async (req) => {
    const t0 = Date.now();
    const session = await provider.open({
      sourceDir: req.dir,
      mode: 'strict',
      networkAllowList: options.networkAllowList ?? [],
      limits: { commandTimeoutMs: req.timeoutMs, outputBytes: req.outputBytes, ...options.limits },
      ...(options.env ? { env: options.env } : {}),
    });
    try {
      const setup = req.setup ?? (options.setupCommand ? { command: options.setupCommand, timeoutMs: req.timeoutMs } : undefined);
      if (setup) {
        const r = await session.exec(setup.command, { timeoutMs: setup.timeoutMs });
        const failed = setupFailureMessage({ ...r, timedOut: r.limit === 'time' });
        if (failed) throw new GradingSetupError(failed);
      }
      // The reports are read once, in a command of their own, after the run's whole process tree is gone.
      const run = await session.exec(req.script, { timeoutMs: req.timeoutMs, ...(req.stdin !== undefined ? { stdin: req.stdin } : {}) });
      const listing = await session.exec(listReportsScript(req.reportGlobs), { timeoutMs: 60_000 });
      // Reports that cannot be read back are the harness's problem, never the model's failure.
      if (listing.truncated || listing.exitCode !== 0) throw new TransientError(`could not read test reports back from the sandbox (exit ${listing.exitCode}, truncated ${listing.truncated})`);
      return {
        exitCode: run.exitCode,
        signal: run.signal,
        stdout: run.stdout,
        stderr: run.stderr,
        timedOut: run.limit === 'time',
        truncated: run.truncated,
        durationMs: Date.now() - t0,
        reports: parseReportListing(listing.stdout),
        workdir: session.workdir,
      };
    } finally {
      await session.close();
    }
  };
}
