import type { BlobsPort } from '../../ports/blobs.ts';
import { gradeAttempt } from '../grading/grade-attempt.ts';
import { sandboxTestRunner } from '../grading/sandbox-test-runner.ts';
import type { TestRunner } from '../grading/test-runner.ts';
import type { SandboxProvider } from '../sandbox/sandbox.ts';
import type { AttemptGrader } from './run-attempt.ts';

/**
 * The grader an eval uses: `gradeAttempt` (pristine copy + the diff, test files reverted, per-test reports), with the
 * tests run in a fresh strict sandbox of the same provider — the tests execute the agent's code — and the test log
 * stored in blobs; in strict mode the diff's flags aimed at the verdict fail the attempt. What `gradeAttempt` throws (a base commit that is gone, a sandbox that will not start) stays a
 * throw: `runAttempt` records it as an infrastructure error of the try.
 *
 * @example
 * const grade = harnessGrader({ provider, blobs: ports.blobs });
 * await runAttempt({ ...input, grade });
 */
export function harnessGrader(options: { provider: SandboxProvider; blobs?: BlobsPort; runTests?: TestRunner }): AttemptGrader {
  const runTests = options.runTests ?? sandboxTestRunner(options.provider);
  return async (request) =>
    gradeAttempt({
      task: request.task,
      sourceDir: request.sourceDir,
      ...(request.baseCommit ? { baseCommit: request.baseCommit } : {}),
      diff: request.diff,
      attemptId: request.attemptId,
      runTests,
      ...(options.blobs ? { blobs: options.blobs } : {}),
      ...(request.trajectory ? { trajectory: request.trajectory } : {}),
      // Flags aimed at the verdict fail strict attempts; lenient ones record them (the stream's checks fail both).
      strict: request.mode !== 'lenient',
    });
}
