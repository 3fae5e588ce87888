import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harnessGrader } from '../../../lib/harness/attempt/harness-grader.ts';
import { gradeAttempt } from '../../../lib/harness/grading/grade-attempt.ts';
import { GradingSetupError } from '../../../lib/harness/grading/grading-setup-error.ts';
import { sandboxTestRunner } from '../../../lib/harness/grading/sandbox-test-runner.ts';
import { NamespaceSandboxProvider } from '../../../lib/harness/sandbox/namespace-sandbox.ts';
import { agentDiff, calcTask, makeRepo } from './grading-repos.ts';

/**
 * A repository whose tests need its setup step: `calc` imports a module the setup command generates (and git
 * ignores), so grading without setup cannot even import the package.
 */
const FILES = {
  '.gitignore': 'calc/_generated.py\n',
  'calc/__init__.py': 'from calc._generated import OFFSET\n\n\ndef add(a, b):\n    return a - b + OFFSET\n',
  'tests/test_calc.py': 'from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_add_zero():\n    assert add(0, 0) == 0\n',
};
const FIXED = 'from calc._generated import OFFSET\n\n\ndef add(a, b):\n    return a + b + OFFSET\n';
const SETUP = `python3 -c "open('calc/_generated.py', 'w').write('OFFSET = 0\\\\n')"`;

const task = (overrides: Parameters<typeof calcTask>[0] = {}) =>
  calcTask({
    id: 'calc-generated',
    setupCommand: SETUP,
    failToPass: ['tests/test_calc.py::test_add'],
    passToPass: ['tests/test_calc.py::test_add_zero'],
    ...overrides,
  });

let repo: { dir: string; base: string };
let fixDiff: string;
let sandboxRoot: string;
let provider: NamespaceSandboxProvider;

beforeAll(async () => {
  repo = await makeRepo(FILES);
  fixDiff = await agentDiff(repo.dir, repo.base, { 'calc/__init__.py': FIXED });
  sandboxRoot = await mkdtemp(join(tmpdir(), 'fw-grade-setup-sbx-'));
  provider = new NamespaceSandboxProvider({ root: sandboxRoot });
});

afterAll(async () => {
  await rm(repo.dir, { recursive: true, force: true });
  await rm(sandboxRoot, { recursive: true, force: true });
});

describe("grading runs the task's setup command in the grading tree first", () => {
  it('the agent diff does not carry the generated file (git ignores it)', () => {
    expect(fixDiff).toContain('calc/__init__.py');
    expect(fixDiff).not.toContain('b/calc/_generated.py');
  });

  it('locally: with setup the fix passes; the same task without setup cannot import the package', async () => {
    const withSetup = await gradeAttempt({ task: task(), sourceDir: repo.dir, baseCommit: repo.base, diff: fixDiff, attemptId: 'setup-local' });
    expect(withSetup.reasons).toEqual([]);
    expect(withSetup.passed).toBe(true);
    expect(withSetup.perTest).toEqual({ 'tests/test_calc.py::test_add': 'passed', 'tests/test_calc.py::test_add_zero': 'passed' });

    const noSetup = await gradeAttempt({ task: task({ setupCommand: undefined }), sourceDir: repo.dir, baseCommit: repo.base, diff: fixDiff, attemptId: 'nosetup-local' });
    expect(noSetup.passed).toBe(false);
    expect(noSetup.perTest['tests/test_calc.py::test_add']).not.toBe('passed');
  }, 60_000);

  it('in the strict namespace sandbox (harnessGrader): the fix passes, no diff fails the fail-to-pass test only', async () => {
    const grade = harnessGrader({ provider });
    const fixed = await grade({ task: task(), sourceDir: repo.dir, baseCommit: repo.base, diff: fixDiff, attemptId: 'setup-sbx' });
    expect(fixed.reasons).toEqual([]);
    expect(fixed.passed).toBe(true);
    const none = await grade({ task: task(), sourceDir: repo.dir, baseCommit: repo.base, diff: '', attemptId: 'setup-sbx-none' });
    expect(none.passed).toBe(false);
    expect(none.perTest).toEqual({ 'tests/test_calc.py::test_add': 'failed', 'tests/test_calc.py::test_add_zero': 'passed' });
  }, 60_000);

  it('a failing setup is a GradingSetupError naming the exit and output, locally and in the sandbox', async () => {
    const broken = task({ setupCommand: 'echo no-such-dependency >&2; exit 7' });
    const local = gradeAttempt({ task: broken, sourceDir: repo.dir, baseCommit: repo.base, diff: fixDiff, attemptId: 'broken-local' });
    await expect(local).rejects.toBeInstanceOf(GradingSetupError);
    await expect(local).rejects.toThrow(/grading setup command exited 7: no-such-dependency/);
    const sandboxed = gradeAttempt({ task: broken, sourceDir: repo.dir, baseCommit: repo.base, diff: fixDiff, attemptId: 'broken-sbx', runTests: sandboxTestRunner(provider) });
    await expect(sandboxed).rejects.toBeInstanceOf(GradingSetupError);
    await expect(sandboxed).rejects.toThrow(/exited 7: no-such-dependency/);
  }, 60_000);

  it("a setup that runs past the task's command limit is a GradingSetupError too", async () => {
    const slow = task({ setupCommand: 'sleep 30', limits: { commandSeconds: 1 } });
    await expect(gradeAttempt({ task: slow, sourceDir: repo.dir, baseCommit: repo.base, diff: fixDiff, attemptId: 'slow-local' })).rejects.toThrow(/grading setup command ran out of time/);
  }, 30_000);
});
