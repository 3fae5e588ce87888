/**
 * The harness `TestRunner` the forge grades with: like `sandboxTestRunner` (a fresh strict sandbox on the prepared
 * tree, network closed unless allowed), but it runs the repository's setup command first, since a forged repository
 * may need its dependencies built before its tests run.
 */
import type { TestRunner } from '../harness/grading/test-runner.ts';
import { collectReportFiles } from '../harness/grading/test-runner.ts';
import type { SandboxProvider } from '../harness/sandbox/sandbox.ts';
import { GradingSetupError } from '../harness/grading/grading-setup-error.ts';

/**
 * @example
 * const runTests = forgeTestRunner(provider, { setupCommand: 'npm ci', networkAllowList: [] });
 * const grade = await gradeAttempt({ task, sourceDir, diff: task.goldPatch!, attemptId: 'oracle', runTests });
 */
export function forgeTestRunner(provider: SandboxProvider, options: { setupCommand?: string; networkAllowList?: string[]; env?: Record<string, string> } = {}): TestRunner {
  return async (req) => {
    const t0 = Date.now();
    const session = await provider.open({
      sourceDir: req.dir,
      mode: 'strict',
      networkAllowList: options.networkAllowList ?? [],
      limits: { commandTimeoutMs: req.timeoutMs, outputBytes: req.outputBytes },
      ...(options.env ? { env: options.env } : {}),
    });
    try {
      if (options.setupCommand) {
        const setup = await session.exec(options.setupCommand, { timeoutMs: req.timeoutMs });
        if (setup.exitCode !== 0) throw new GradingSetupError(`setup command exited ${setup.exitCode ?? setup.signal}: ${`${setup.stdout}\n${setup.stderr}`.trim().slice(-1000)}`);
      }
      const run = await session.exec(req.script, { timeoutMs: req.timeoutMs });
      return {
        exitCode: run.exitCode,
        signal: run.signal,
        stdout: run.stdout,
        stderr: run.stderr,
        timedOut: run.limit === 'time',
        truncated: run.truncated,
        durationMs: Date.now() - t0,
        reports: await collectReportFiles(session.workdir, req.reportGlobs),
        workdir: session.workdir,
      };
    } finally {
      await session.close();
    }
  };
}
