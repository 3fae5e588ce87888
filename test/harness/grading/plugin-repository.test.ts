/**
 * A repository that is itself a pytest plugin: its source defines hooks and uses pytest's plugin API, so a correct
 * fix adds lines the verdict-tampering patterns match (`pytest.hookimpl`, `pytest_report_header`). Strict grading
 * fails such a diff as runner patching — right for an agent, wrong for the forge's trusted reference patch, which
 * grades with `strict: false` (`lib/forge/certify-candidate.ts`, `recertify-suite.ts`, `make-canary.ts`): the
 * flags are recorded, the verdict is the tests'.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gradeAttempt } from '../../../lib/harness/grading/grade-attempt.ts';
import { agentDiff, calcTask, makeRepo } from './grading-repos.ts';

const PLUGIN_BUGGY = `import pytest


@pytest.fixture
def greeting():
    return 'helo'
`;

const PLUGIN_FIXED = `import pytest


@pytest.fixture
def greeting():
    return 'hello'


@pytest.hookimpl(trylast=True)
def pytest_report_header(config):
    return 'pytest-greeting: active'
`;

const TESTS = `pytest_plugins = ['pytest_greeting']


def test_greeting(greeting):
    assert greeting == 'hello'


def test_plain():
    assert 1 + 1 == 2
`;

let repo: { dir: string; base: string };

beforeAll(async () => {
  repo = await makeRepo({ 'pytest_greeting.py': PLUGIN_BUGGY, 'tests/test_greeting.py': TESTS });
});
afterAll(async () => {
  await rm(repo.dir, { recursive: true, force: true });
});

const task = calcTask({
  id: 'greeting',
  failToPass: ['tests/test_greeting.py::test_greeting'],
  passToPass: ['tests/test_greeting.py::test_plain'],
  testFiles: ['tests/test_greeting.py'],
  testCommand: 'python3 -m pytest tests',
});

describe('a pytest-plugin repository: the reference fix adds plugin hooks', () => {
  it('strict grading fails it as runner patching; lenient grading (the forge oracle) passes it and records the flags', async () => {
    const diff = await agentDiff(repo.dir, repo.base, { 'pytest_greeting.py': PLUGIN_FIXED });
    const strict = await gradeAttempt({ task, sourceDir: repo.dir, baseCommit: repo.base, diff, attemptId: 'plugin-strict' });
    expect(strict.perTest['tests/test_greeting.py::test_greeting']).toBe('passed');
    expect(strict.passed).toBe(false);
    expect(strict.integrityFailed).toBe(true);
    expect(strict.reasons.join('\n')).toMatch(/integrity-flag: runner-patching pytest_greeting\.py/);

    const lenient = await gradeAttempt({ task, sourceDir: repo.dir, baseCommit: repo.base, diff, attemptId: 'plugin-lenient', strict: false });
    expect(lenient.reasons).toEqual([]);
    expect(lenient.passed).toBe(true);
    expect(lenient.integrityFailed).toBeUndefined();
    expect(lenient.integrity.map((f) => f.kind)).toContain('runner-patching');
  });
});
