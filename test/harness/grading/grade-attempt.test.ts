import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsBlobs } from '../../../lib/drivers/local/fs-blobs.ts';
import { gradeAttempt } from '../../../lib/harness/grading/grade-attempt.ts';
import { reasonCode } from '../../../lib/harness/grading/decide-verdict.ts';
import { GradingSetupError } from '../../../lib/harness/grading/grading-setup-error.ts';
import { GradeResultSchema } from '../../../lib/harness/grading/schemas.ts';
import { agentDiff, CALC_BUGGY, CALC_FIXED, CALC_TESTS, calcTask, commitOnTop, makeRepo, PY_FILES } from './grading-repos.ts';
import { gitIn } from '../../support/git-fixture.ts';

let repo: { dir: string; base: string };
let blobsDir: string;
let blobs: FsBlobs;

beforeAll(async () => {
  repo = await makeRepo(PY_FILES);
  // A later commit holds the fix: grading must start from the base commit, not HEAD.
  await commitOnTop(repo.dir, { 'calc/__init__.py': CALC_FIXED }, 'the fix');
  blobsDir = await mkdtemp(join(tmpdir(), 'fw-grade-blobs-'));
  blobs = new FsBlobs(blobsDir, { fsync: false });
});

afterAll(async () => {
  await rm(repo.dir, { recursive: true, force: true });
  await rm(blobsDir, { recursive: true, force: true });
});

const codes = (reasons: string[]) => reasons.map(reasonCode);

describe('gradeAttempt with pytest on a real repository', () => {
  it('passes a correct fix, reads outcomes from the result stream (checked against the JUnit report) and stores the test log', async () => {
    const diff = await agentDiff(repo.dir, repo.base, { 'calc/__init__.py': CALC_FIXED });
    const result = await gradeAttempt({ task: calcTask(), sourceDir: repo.dir, baseCommit: repo.base, diff, attemptId: 'a-correct', blobs });

    expect(GradeResultSchema.parse(result)).toEqual(result);
    expect(result.reasons).toEqual([]);
    expect(result.passed).toBe(true);
    expect(result.perTest).toEqual({
      'tests/test_calc.py::test_add': 'passed',
      'tests/test_calc.py::test_add_negative': 'passed',
      'tests/test_calc.py::test_mul': 'passed',
      'tests/test_calc.py::TestMul::test_zero': 'passed',
    });
    expect(result.collected).toBe(4);
    expect(result.reportFormats).toEqual(['pytest-stream']);
    expect(result.channel).toMatchObject({ kind: 'pytest-stream', sessions: 1 });
    expect(result.integrityFailed).toBeUndefined();
    expect(result.applyMode).toBe('exact');
    expect(result.baseCommit).toBe(repo.base);
    expect(result.logKey).toBe('grading/a-correct/test.log');
    const log = new TextDecoder().decode(await blobs.get('grading/a-correct/test.log'));
    expect(log).toContain('verdict: passed');
    expect(log).toContain('4 passed');
    expect(result.integrity).toEqual([]);
  });

  it('fails a wrong fix and names the failing ids', async () => {
    const wrong = CALC_BUGGY.replace('return a - b', 'return a * b');
    const diff = await agentDiff(repo.dir, repo.base, { 'calc/__init__.py': wrong });
    const result = await gradeAttempt({ task: calcTask(), sourceDir: repo.dir, baseCommit: repo.base, diff, attemptId: 'a-wrong' });

    expect(result.passed).toBe(false);
    expect(result.perTest['tests/test_calc.py::test_add']).toBe('failed');
    expect(result.perTest['tests/test_calc.py::test_add_negative']).toBe('failed');
    expect(result.perTest['tests/test_calc.py::test_mul']).toBe('passed');
    expect(result.reasons).toEqual([
      'fail-to-pass-not-passed: tests/test_calc.py::test_add (failed)',
      'fail-to-pass-not-passed: tests/test_calc.py::test_add_negative (failed)',
    ]);
    expect(result.exitCode).toBe(1);
    expect(result.logKey).toBeUndefined();
  });

  it('grades from the base commit, not from a later commit that holds the fix, and leaves the source repo as it was', async () => {
    const headBefore = (await gitIn(repo.dir, 'rev-parse', 'HEAD')).trim();
    const result = await gradeAttempt({ task: calcTask(), sourceDir: repo.dir, baseCommit: repo.base, diff: '', attemptId: 'a-empty' });
    expect(result.passed).toBe(false);
    expect(result.applyMode).toBe('empty');
    expect(result.perTest['tests/test_calc.py::test_add']).toBe('failed');
    expect((await gitIn(repo.dir, 'rev-parse', 'HEAD')).trim()).toBe(headBefore);
    expect(await gitIn(repo.dir, 'status', '--porcelain')).toBe('');
  });

  it('reverts an edit of the test file that makes the tests pass, fails the attempt and flags test-file-edit', async () => {
    const cheat = CALC_TESTS.replace('assert add(2, 3) == 5', 'assert add(2, 3) == -1').replace('assert add(-1, -1) == -2', 'assert add(-1, -1) == 0');
    const diff = await agentDiff(repo.dir, repo.base, { 'tests/test_calc.py': cheat });
    const result = await gradeAttempt({ task: calcTask(), sourceDir: repo.dir, baseCommit: repo.base, diff, attemptId: 'a-cheat' });

    expect(result.passed).toBe(false);
    expect(result.reverted).toEqual([{ path: 'tests/test_calc.py', kind: 'task-test-file', action: 'restored' }]);
    expect(result.perTest['tests/test_calc.py::test_add']).toBe('failed');
    expect(result.integrity.filter((f) => f.kind === 'test-file-edit')).toEqual([
      expect.objectContaining({ kind: 'test-file-edit', file: 'tests/test_calc.py', source: 'diff' }),
    ]);
  });

  it('still passes a correct fix that also edited the test file (the edit is simply undone)', async () => {
    const diff = await agentDiff(repo.dir, repo.base, {
      'calc/__init__.py': CALC_FIXED,
      'tests/test_calc.py': CALC_TESTS.replace('assert mul(2, 3) == 6', 'assert True'),
    });
    const result = await gradeAttempt({ task: calcTask(), sourceDir: repo.dir, baseCommit: repo.base, diff, attemptId: 'a-fix-and-edit' });
    expect(result.passed).toBe(true);
    expect(result.reverted.map((r) => r.path)).toEqual(['tests/test_calc.py']);
    expect(result.integrity.map((f) => f.kind)).toContain('test-file-edit');
  });

  it('removes a conftest.py that exits early (pytest would exit 0 with no report) and flags it', async () => {
    const diff = await agentDiff(repo.dir, repo.base, { 'tests/conftest.py': 'import sys\nsys.exit(0)\n' });
    const result = await gradeAttempt({ task: calcTask(), sourceDir: repo.dir, baseCommit: repo.base, diff, attemptId: 'a-conftest' });
    expect(result.reverted).toEqual([{ path: 'tests/conftest.py', kind: 'runner-config', action: 'removed' }]);
    expect(result.passed).toBe(false);
    expect(result.perTest['tests/test_calc.py::test_add']).toBe('failed');
    expect(result.integrity.map((f) => f.kind).sort()).toEqual(['exit-call', 'runner-config-edit']);
  });

  it('fails an os._exit(0) in the code under test although the test command exits 0: the session never ends, the cut test is an error, the rest missing', async () => {
    const diff = await agentDiff(repo.dir, repo.base, { 'calc/__init__.py': CALC_FIXED.replace('    return a + b', '    import os\n    os._exit(0)') });
    const result = await gradeAttempt({ task: calcTask(), sourceDir: repo.dir, baseCommit: repo.base, diff, attemptId: 'a-exit' });
    expect(result.exitCode).toBe(0);
    expect(result.passed).toBe(false);
    expect(Object.values(result.perTest)).toEqual(['error', 'missing', 'missing', 'missing']);
    expect(codes(result.reasons)).toEqual([
      'test-stream-incomplete',
      'fail-to-pass-not-passed',
      'fail-to-pass-not-passed',
      'pass-to-pass-not-passed',
      'pass-to-pass-not-passed',
      'collected-tests-dropped',
    ]);
    expect(result.integrity).toEqual([expect.objectContaining({ kind: 'exit-call', file: 'calc/__init__.py', line: 3, evidence: 'os._exit(0)' })]);
  });

  it('fails an exit at import in source code: collection breaks, the tests are missing and the count drops', async () => {
    const diff = await agentDiff(repo.dir, repo.base, { 'calc/__init__.py': `import sys\nsys.exit(0)\n${CALC_FIXED}` });
    const result = await gradeAttempt({ task: calcTask(), sourceDir: repo.dir, baseCommit: repo.base, diff, attemptId: 'a-exit-import' });
    expect(result.passed).toBe(false);
    expect(Object.values(result.perTest)).toEqual(['missing', 'missing', 'missing', 'missing']);
    expect(codes(result.reasons)).toContain('collected-tests-dropped');
    expect(result.collected).toBeLessThan(4);
  });

  it('fails when tests outside the graded ids disappear: the collected count is checked against the baseline', async () => {
    // test_ops.py is parametrized over calc.OPERATIONS: shrink the list and its tests silently vanish.
    const files = {
      ...PY_FILES,
      'calc/__init__.py': `${CALC_BUGGY}\n\nOPERATIONS = ["add", "mul"]\n`,
      'tests/test_ops.py': 'import calc\nimport pytest\n\n\n@pytest.mark.parametrize("name", calc.OPERATIONS)\ndef test_has(name):\n    assert callable(getattr(calc, name))\n',
    };
    const two = await makeRepo(files);
    try {
      const task = calcTask({ passToPass: [], metadata: { expectedTestCount: 6 } });
      const shrink = await agentDiff(two.dir, two.base, { 'calc/__init__.py': `${CALC_FIXED}\n\nOPERATIONS = ["add"]\n` });
      const result = await gradeAttempt({ task, sourceDir: two.dir, baseCommit: two.base, diff: shrink, attemptId: 'a-drop' });
      expect(result.perTest).toEqual({ 'tests/test_calc.py::test_add': 'passed', 'tests/test_calc.py::test_add_negative': 'passed' });
      expect(result.passed).toBe(false);
      expect(result.collected).toBe(5);
      expect(result.expectedCollected).toBe(6);
      expect(result.reasons).toEqual(['collected-tests-dropped: 5 collected, 6 expected']);

      const keep = await agentDiff(two.dir, two.base, { 'calc/__init__.py': `${CALC_FIXED}\n\nOPERATIONS = ["add", "mul"]\n` });
      const ok = await gradeAttempt({ task, sourceDir: two.dir, baseCommit: two.base, diff: keep, attemptId: 'a-nodrop' });
      expect(ok.reasons).toEqual([]);
      expect(ok.collected).toBe(6);
    } finally {
      await rm(two.dir, { recursive: true, force: true });
    }
  });

  it('restores a deleted test file; a new test file the agent added is kept apart (listed, not run, not reverted)', async () => {
    // A new test module can monkeypatch the code under test at collection; grading leaves it out of the verdict's run.
    const diff = await agentDiff(repo.dir, repo.base, {
      'tests/test_calc.py': null,
      'tests/test_zz_patch.py': 'import calc\ncalc.add = lambda a, b: a + b\n\ndef test_ok():\n    assert True\n',
    });
    const result = await gradeAttempt({ task: calcTask(), sourceDir: repo.dir, baseCommit: repo.base, diff, attemptId: 'a-delete' });
    expect(result.reverted.sort((a, b) => a.path.localeCompare(b.path))).toEqual([
      { path: 'tests/test_calc.py', kind: 'task-test-file', action: 'restored' },
    ]);
    expect(result.agentTests).toEqual(['tests/test_zz_patch.py']);
    expect(result.passed).toBe(false);
    expect(result.collected).toBe(4);
    expect(result.perTest['tests/test_calc.py::test_add']).toBe('failed');
  });

  it("fails with 'patch-does-not-apply' when the diff does not apply, and logs git's reason", async () => {
    const other = await makeRepo({ ...PY_FILES, 'calc/__init__.py': CALC_BUGGY.replace('def mul', 'def multiply') });
    try {
      // Made against different content: its context does not match the base.
      const diff = await agentDiff(other.dir, other.base, { 'calc/__init__.py': CALC_FIXED.replace('def mul', 'def multiply').replace('a * b', 'b * a') });
      const result = await gradeAttempt({ task: calcTask(), sourceDir: repo.dir, baseCommit: repo.base, diff, attemptId: 'a-noapply', blobs });
      expect(result.passed).toBe(false);
      expect(result.applyMode).toBe('failed');
      expect(codes(result.reasons)).toEqual(['patch-does-not-apply']);
      expect(Object.values(result.perTest)).toEqual(['missing', 'missing', 'missing', 'missing']);
      const log = new TextDecoder().decode(await blobs.get('grading/a-noapply/test.log'));
      expect(log).toMatch(/patch does not apply|patch failed/);
    } finally {
      await rm(other.dir, { recursive: true, force: true });
    }
    const garbage = await gradeAttempt({ task: calcTask(), sourceDir: repo.dir, baseCommit: repo.base, diff: 'this is not a patch\n', attemptId: 'a-garbage' });
    expect(codes(garbage.reasons)).toEqual(['patch-does-not-apply']);
  });

  it('applies a diff whose context differs only in whitespace, and says so', async () => {
    const diff = (await agentDiff(repo.dir, repo.base, { 'calc/__init__.py': CALC_FIXED })).replace(' def add(a, b):', ' def add(a,  b):');
    const result = await gradeAttempt({ task: calcTask(), sourceDir: repo.dir, baseCommit: repo.base, diff, attemptId: 'a-ws' });
    expect(result.applyMode).toBe('whitespace-tolerant');
    expect(result.passed).toBe(true);
  });

  it('applies binary changes', async () => {
    const diff = await agentDiff(repo.dir, repo.base, { 'calc/__init__.py': CALC_FIXED, 'calc/data.bin': Buffer.from([0, 1, 2, 255, 0, 7]) });
    expect(diff).toContain('GIT binary patch');
    const task = calcTask({ testCommand: `python3 -c "import sys; d=open('calc/data.bin','rb').read(); sys.exit(0 if d==bytes([0,1,2,255,0,7]) else 3)" && python3 -m pytest tests` });
    const result = await gradeAttempt({ task, sourceDir: repo.dir, baseCommit: repo.base, diff, attemptId: 'a-bin' });
    expect(result.exitCode).toBe(0);
    expect(result.passed).toBe(true);
  });

  it("applies the task's test patch after the revert (SWE-bench style) and grades the tests it adds", async () => {
    const noTests = await makeRepo({ 'calc/__init__.py': CALC_BUGGY, 'tests/test_mul.py': 'from calc import mul\n\ndef test_mul():\n    assert mul(2, 3) == 6\n' });
    try {
      const testPatch = await agentDiff(noTests.dir, noTests.base, { 'tests/test_add.py': 'from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n' });
      const task = calcTask({ failToPass: ['tests/test_add.py::test_add'], passToPass: ['tests/test_mul.py::test_mul'], testFiles: [], testPatch });
      // The agent writes its own, weaker tests/test_add.py: the task's version replaces it.
      const diff = await agentDiff(noTests.dir, noTests.base, { 'tests/test_add.py': 'def test_add():\n    assert True\n' });
      const cheat = await gradeAttempt({ task, sourceDir: noTests.dir, baseCommit: noTests.base, diff, attemptId: 'a-tp-cheat' });
      expect(cheat.reverted).toEqual([{ path: 'tests/test_add.py', kind: 'task-test-file', action: 'removed' }]);
      expect(cheat.perTest).toEqual({ 'tests/test_add.py::test_add': 'failed', 'tests/test_mul.py::test_mul': 'passed' });
      expect(cheat.passed).toBe(false);

      const fix = await agentDiff(noTests.dir, noTests.base, { 'calc/__init__.py': CALC_FIXED });
      const good = await gradeAttempt({ task, sourceDir: noTests.dir, baseCommit: noTests.base, diff: fix, attemptId: 'a-tp-fix' });
      expect(good.passed).toBe(true);
      expect(good.collected).toBe(2);
    } finally {
      await rm(noTests.dir, { recursive: true, force: true });
    }
  });

  it('reverts pyproject.toml only when its [tool.pytest] or dependency part changed', async () => {
    const pyproject = '[project]\nname = "calc"\nversion = "0.1.0"\ndependencies = []\n\n[tool.pytest.ini_options]\naddopts = "-q"\n';
    const withCfg = await makeRepo({ ...PY_FILES, 'pyproject.toml': pyproject });
    try {
      const task = calcTask();
      const deselect = await agentDiff(withCfg.dir, withCfg.base, {
        'pyproject.toml': pyproject.replace('addopts = "-q"', 'addopts = "-q --deselect tests/test_calc.py::test_add_negative"'),
        'calc/__init__.py': CALC_BUGGY.replace('return a - b', 'return 5 if (a, b) == (2, 3) else a - b'),
      });
      const r1 = await gradeAttempt({ task, sourceDir: withCfg.dir, baseCommit: withCfg.base, diff: deselect, attemptId: 'a-deselect' });
      expect(r1.reverted).toEqual([{ path: 'pyproject.toml', kind: 'runner-config', action: 'restored' }]);
      expect(r1.perTest['tests/test_calc.py::test_add_negative']).toBe('failed');
      expect(r1.passed).toBe(false);

      const dep = await agentDiff(withCfg.dir, withCfg.base, { 'pyproject.toml': pyproject.replace('dependencies = []', 'dependencies = ["attrs"]'), 'calc/__init__.py': CALC_FIXED });
      const r2 = await gradeAttempt({ task, sourceDir: withCfg.dir, baseCommit: withCfg.base, diff: dep, attemptId: 'a-dep' });
      // A dependency chooses the graded environment: put back too (recorded as such), flagged for review, not failing.
      expect(r2.reverted).toEqual([{ path: 'pyproject.toml', kind: 'dependency-manifest', action: 'restored' }]);
      expect(r2.passed).toBe(true);
      expect(r2.integrity.map((f) => f.kind)).toEqual(['runner-config-edit', 'dependency-edit']);

      const meta = await agentDiff(withCfg.dir, withCfg.base, { 'pyproject.toml': pyproject.replace('version = "0.1.0"', 'version = "0.2.0"'), 'calc/__init__.py': CALC_FIXED });
      const r3 = await gradeAttempt({ task, sourceDir: withCfg.dir, baseCommit: withCfg.base, diff: meta, attemptId: 'a-meta' });
      expect(r3.reverted).toEqual([]);
      expect(r3.passed).toBe(true);
    } finally {
      await rm(withCfg.dir, { recursive: true, force: true });
    }
  });

  it('fails a run that times out, naming the timeout', async () => {
    const task = calcTask({ testCommand: 'sleep 20; python3 -m pytest tests' });
    const diff = await agentDiff(repo.dir, repo.base, { 'calc/__init__.py': CALC_FIXED });
    const t0 = Date.now();
    const result = await gradeAttempt({ task, sourceDir: repo.dir, baseCommit: repo.base, diff, attemptId: 'a-timeout', timeoutMs: 500 });
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(result.timedOut).toBe(true);
    expect(codes(result.reasons)[0]).toBe('test-command-timed-out');
    expect(result.passed).toBe(false);
  });

  it('grades from the stream when the command sends the JUnit report elsewhere', async () => {
    const task = calcTask({ testCommand: 'python3 -m pytest --junitxml=/dev/null tests' });
    const diff = await agentDiff(repo.dir, repo.base, { 'calc/__init__.py': CALC_FIXED });
    const result = await gradeAttempt({ task, sourceDir: repo.dir, baseCommit: repo.base, diff, attemptId: 'a-summary' });
    // The stream does not depend on the JUnit file; pytest's printed summary is only its cross-check.
    expect(result.reportFormats).toEqual(['pytest-stream']);
    expect(result.passed).toBe(true);
    expect(result.collected).toBe(4);
  });

  it("does not read a report file the diff planted at the task's report path", async () => {
    const fake = '<testsuites><testsuite name="x">' + ['test_add', 'test_add_negative', 'test_mul'].map((n) => `<testcase classname="tests.test_calc" name="${n}"/>`).join('') + '<testcase classname="tests.test_calc.TestMul" name="test_zero"/></testsuite></testsuites>';
    const task = calcTask({ testCommand: 'true', metadata: { reportGlobs: ['reports/*.xml'] } });
    const diff = await agentDiff(repo.dir, repo.base, { 'reports/junit.xml': fake });
    const result = await gradeAttempt({ task, sourceDir: repo.dir, baseCommit: repo.base, diff, attemptId: 'a-planted' });
    expect(result.exitCode).toBe(0);
    expect(result.passed).toBe(false);
    expect(codes(result.reasons)[0]).toBe('no-test-report');

    // The same glob reads a report the test command itself writes there.
    const honest = calcTask({ testCommand: 'mkdir -p reports && python3 -m pytest --junitxml=reports/junit.xml tests', metadata: { reportGlobs: ['reports/*.xml'] } });
    const fix = await agentDiff(repo.dir, repo.base, { 'calc/__init__.py': CALC_FIXED });
    const ok = await gradeAttempt({ task: honest, sourceDir: repo.dir, baseCommit: repo.base, diff: fix, attemptId: 'a-report-glob' });
    expect(ok.passed).toBe(true);
    expect(ok.reportFormats).toEqual(['pytest-stream', 'junit-xml']);
  });

  it('throws GradingSetupError (not a model failure) for a base commit the repository lacks', async () => {
    await expect(gradeAttempt({ task: calcTask(), sourceDir: repo.dir, baseCommit: 'deadbeefdeadbeef', diff: '', attemptId: 'a-nobase' })).rejects.toBeInstanceOf(GradingSetupError);
  });

  it('cleans up its temp trees', async () => {
    const privateTmp = await mkdtemp(join(tmpdir(), 'fw-grade-tmpdir-'));
    const saved = process.env['TMPDIR'];
    process.env['TMPDIR'] = privateTmp;
    try {
      await gradeAttempt({ task: calcTask(), sourceDir: repo.dir, baseCommit: repo.base, diff: '', attemptId: 'a-clean' });
      await gradeAttempt({ task: calcTask(), sourceDir: repo.dir, baseCommit: repo.base, diff: 'not a patch', attemptId: 'a-clean-2' });
      expect(await readdir(privateTmp)).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env['TMPDIR'];
      else process.env['TMPDIR'] = saved;
      await rm(privateTmp, { recursive: true, force: true });
    }
  });
});
