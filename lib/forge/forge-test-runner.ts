/**
 * The harness `TestRunner` the forge grades with. It is the harness's own `sandboxTestRunner` (a fresh strict sandbox
 * on the prepared tree, network closed unless allowed, the task's setup command first), so a task the forge certified
 * grades the same way under `flywheel eval run`. `setupCommand` is the forge spec's, run when the graded task names
 * none of its own.
 */
import { sandboxTestRunner } from '../harness/grading/sandbox-test-runner.ts';
import type { TestRunner } from '../harness/grading/test-runner.ts';
import type { SandboxProvider } from '../harness/sandbox/sandbox.ts';

/**
 * @example
 * const runTests = forgeTestRunner(provider, { setupCommand: 'npm ci', networkAllowList: [] });
 * const grade = await gradeAttempt({ task, sourceDir, diff: task.goldPatch!, attemptId: 'oracle', runTests });
 */
export function forgeTestRunner(provider: SandboxProvider, options: { setupCommand?: string; networkAllowList?: string[]; env?: Record<string, string> } = {}): TestRunner {
  return sandboxTestRunner(provider, {
    networkAllowList: options.networkAllowList ?? [],
    ...(options.env ? { env: options.env } : {}),
    ...(options.setupCommand ? { setupCommand: options.setupCommand } : {}),
  });
}
