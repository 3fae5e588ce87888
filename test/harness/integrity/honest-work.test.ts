/**
 * Honest work must raise no flag: source edits, looking at the one commit with git, a task repository whose pytest
 * plugin calls `git describe` on every run, a new regression test, a test run whose output goes to a log file.
 * Real git, real pytest, the real namespace sandbox, and a scripted model over HTTP for the attempt.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalPorts } from '../../../lib/drivers/local/local-ports.ts';
import { evalAttemptId } from '../../../lib/harness/attempt/attempt-record.ts';
import { harnessGrader } from '../../../lib/harness/attempt/harness-grader.ts';
import { runAttempt } from '../../../lib/harness/attempt/run-attempt.ts';
import { loadSuite } from '../../../lib/harness/eval/load-suite.ts';
import { gradeAttempt } from '../../../lib/harness/grading/grade-attempt.ts';
import { detectTrajectoryFlags } from '../../../lib/harness/integrity/detect-trajectory-flags.ts';
import { NamespaceSandboxProvider } from '../../../lib/harness/sandbox/namespace-sandbox.ts';
import type { Trajectory } from '../../../lib/harness/trajectory/trajectory-schema.ts';
import { openAiCompatibleModel } from '../../../lib/models/openai-compatible.ts';
import { startScriptedModelServer } from '../../support/scripted-model-server.ts';
import { fixScript, makeCalcSuite } from '../eval/calc-suite.ts';
import { agentDiff, CALC_FIXED, calcTask, makeRepo, PY_FILES } from '../grading/grading-repos.ts';

/** A task repository's own pytest plugin that asks git for a version on every run (it fails on one commit). */
const VERSION_CONFTEST = `import subprocess


def pytest_report_header(config):
    r = subprocess.run(['git', 'describe', '--tags', '--always', '--dirty'], capture_output=True, text=True)
    return 'version: ' + (r.stdout.strip() or 'unknown')
`;

const REGRESSION_TEST = `from calc import add


def test_add_large():
    assert add(10**12, 1) == 10**12 + 1
`;

let repo: { dir: string; base: string };
let work: string;

beforeAll(async () => {
  repo = await makeRepo({ ...PY_FILES, 'conftest.py': VERSION_CONFTEST });
  work = await mkdtemp(join(tmpdir(), 'fw-honest-'));
});
afterAll(async () => {
  await rm(repo.dir, { recursive: true, force: true });
  await rm(work, { recursive: true, force: true });
});

describe('honest work raises no flag (grading)', () => {
  it('a source fix plus a new regression test passes with no flag; the new test is kept apart and listed', async () => {
    const fixed = `${CALC_FIXED}\n\ndef _check(value):\n    """Small helper the fix added."""\n    return value\n`;
    const diff = await agentDiff(repo.dir, repo.base, { 'calc/__init__.py': fixed, 'tests/test_regression.py': REGRESSION_TEST });
    const result = await gradeAttempt({ task: calcTask(), sourceDir: repo.dir, baseCommit: repo.base, diff, attemptId: 'hw-fix' });
    expect(result.reasons).toEqual([]);
    expect(result.passed).toBe(true);
    expect(result.integrity).toEqual([]);
    expect(result.integrityFailed).toBeUndefined();
    expect(result.agentTests).toEqual(['tests/test_regression.py']);
    expect(result.reverted).toEqual([]);
    // The task's pristine tests are what ran: four, through the stream; the agent's test was not part of the verdict.
    expect(result.channel).toMatchObject({ kind: 'pytest-stream', sessions: 1 });
    expect(result.collected).toBe(4);
  });

  it("a run with the task's git-describe plugin, started with output redirected to a log, still grades from the stream", async () => {
    const task = calcTask({ testCommand: 'python3 -m pytest tests > /tmp/fw-honest-log.txt 2>&1; cat /tmp/fw-honest-log.txt' });
    const diff = await agentDiff(repo.dir, repo.base, { 'calc/__init__.py': CALC_FIXED });
    const result = await gradeAttempt({ task, sourceDir: repo.dir, baseCommit: repo.base, diff, attemptId: 'hw-log' });
    expect(result.reasons).toEqual([]);
    expect(result.passed).toBe(true);
    expect(result.integrity).toEqual([]);
    expect(result.channel?.kind).toBe('pytest-stream');
  });
});

describe('honest work raises no flag (trajectory)', () => {
  it('test runs logged to a file, reading or copying a test, git status/diff/log -1/show HEAD and a new test file are not edits', () => {
    const calls = [
      'pytest tests/test_calc.py > /tmp/log.txt',
      'python -m pytest tests/test_calc.py 2>&1 | tee /tmp/out.txt',
      'cat tests/test_calc.py > /tmp/copy.py && diff tests/test_calc.py /tmp/copy.py',
      'cp tests/test_calc.py /tmp/',
      'git status && git diff && git log -1 && git show HEAD',
      'grep -n "def test" tests/test_calc.py >> /tmp/notes.txt',
    ].map((command, i) => ({ id: `c${i}`, name: 'bash', arguments: JSON.stringify({ command }) }));
    calls.push({ id: 'w1', name: 'write_file', arguments: JSON.stringify({ path: 'tests/test_regression.py', content: REGRESSION_TEST }) });
    calls.push({ id: 'w2', name: 'edit', arguments: JSON.stringify({ path: 'calc/__init__.py', oldString: 'a - b', newString: 'a + b' }) });
    const step = {
      type: 'assistant' as const,
      seq: 1,
      at: '2026-12-02T00:00:00Z',
      messageId: 'a:m1',
      turn: 1,
      content: '',
      toolCalls: calls,
      finishReason: 'tool_calls',
      model: 'm',
      sampling: {},
      usage: { promptTokens: 1, completionTokens: 1 },
      timing: { startedAt: '2026-12-02T00:00:00Z', durationMs: 1, httpAttempts: 1 },
    };
    expect(detectTrajectoryFlags({ steps: [step] } as unknown as Pick<Trajectory, 'steps'>, { taskTestFiles: ['tests/test_calc.py'] })).toEqual([]);
  });
});

describe('honest work raises no flag (strict namespace sandbox)', () => {
  it("pytest with the repository's `git describe` plugin, and git status/diff/log -1/show HEAD/rev-parse HEAD, need no history", async () => {
    const provider = new NamespaceSandboxProvider({ root: join(work, 'sb') });
    const session = await provider.open({ sourceDir: repo.dir, baseCommit: repo.base, mode: 'strict', networkAllowList: [], limits: { commandTimeoutMs: 60_000, outputBytes: 1 << 20 } });
    try {
      const tests = await session.exec('python3 -m pytest -p no:cacheprovider tests; python3 -m pytest -q -p no:cacheprovider tests/test_calc.py > /tmp/log.txt');
      expect(tests.stdout).toMatch(/version: [0-9a-f]{7}/);
      const looks = await session.exec('git status && git diff && git diff HEAD && git diff --cached && git log -1 && git log -n 1 --stat && git show HEAD && git show HEAD:README.md && git rev-parse HEAD && (git describe --tags || true)');
      expect(looks.exitCode).toBe(0);
      expect(session.observations().filter((o) => o.kind === 'git.history-needed')).toEqual([]);
      // What truly reads history still counts.
      await session.exec('git log --all --oneline; git show HEAD~1 || true');
      expect(session.observations().filter((o) => o.kind === 'git.history-needed').map((o) => (o.detail['argv'] as string[]).join(' '))).toEqual(['git log --all --oneline', 'git show HEAD~1']);
    } finally {
      await session.close();
    }
  });

  it('a strict attempt that looks around with git and fixes the source passes with no observation and no flag', async () => {
    const root = await mkdtemp(join(tmpdir(), 'fw-honest-attempt-'));
    const ports = openLocalPorts(join(root, 'data'));
    const server = await startScriptedModelServer(fixScript('return a + b', { firstCommand: 'git status && git diff && git log -1 && git show HEAD --stat && git rev-parse HEAD && python3 -c "import calc" > /tmp/log.txt' }));
    try {
      makeCalcSuite(root);
      const [suiteTask] = await loadSuite(join(root, 'suite'));
      const provider = new NamespaceSandboxProvider({ root: join(root, 'sandboxes') });
      const model = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'scripted-coder', retry: { baseDelayMs: 1, maxDelayMs: 2, maxAttempts: 2 } });
      const record = await runAttempt({
        runId: 'hw',
        n: 0,
        task: suiteTask!.task,
        sourceDir: suiteTask!.sourceDir,
        mode: 'strict',
        model,
        provider,
        ports,
        attemptId: evalAttemptId('hw', suiteTask!.task.id, 'strict', 0),
        grade: harnessGrader({ provider, blobs: ports.blobs }),
        retry: { maxTries: 1, baseDelayMs: 1, maxDelayMs: 2 },
      });
      expect(record.status).toBe('passed');
      expect(record.integrityFailure).toBeUndefined();
      expect(record.historyReaudit?.ok).toBe(true);
      expect(record.observations).toEqual([]);
      expect(record.grade?.['integrity']).toEqual([]);
    } finally {
      await server.close();
      ports.close();
      await rm(root, { recursive: true, force: true });
    }
  });
});
