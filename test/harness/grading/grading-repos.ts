/**
 * Real git repositories for the grading tests: a small Python package with pytest tests, and a helper that makes an
 * agent's diff the way the sandbox does (`git diff --binary` of a worktree against the base commit).
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { parseTask, type Task, type TaskInput } from '../../../lib/harness/task/task-schema.ts';
import { gitIn } from '../../support/git-fixture.ts';

const run = promisify(execFile);

export async function writeFiles(dir: string, files: Record<string, string | Buffer | null>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path);
    if (content === null) {
      await rm(full, { force: true });
      continue;
    }
    await mkdir(dirname(full), { recursive: true });
    await writeFile(full, content);
  }
}

/** A repository with one commit of `files`; returns its dir and the commit. */
export async function makeRepo(files: Record<string, string | Buffer>): Promise<{ dir: string; base: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'fw-grade-src-'));
  await gitIn(dir, 'init', '-q', '-b', 'main');
  await writeFiles(dir, files);
  await gitIn(dir, 'add', '-A');
  await gitIn(dir, 'commit', '-q', '-m', 'base');
  return { dir, base: (await gitIn(dir, 'rev-parse', 'HEAD')).trim() };
}

/** Adds a commit on top (the "later commit" an agent must not profit from). */
export async function commitOnTop(dir: string, files: Record<string, string | Buffer | null>, message = 'later'): Promise<string> {
  await writeFiles(dir, files);
  await gitIn(dir, 'add', '-A');
  await gitIn(dir, 'commit', '-q', '-m', message);
  return (await gitIn(dir, 'rev-parse', 'HEAD')).trim();
}

/** The diff an agent would produce by editing `edits` (null deletes) in a checkout of `base`. */
export async function agentDiff(repo: string, base: string, edits: Record<string, string | Buffer | null>): Promise<string> {
  const work = await mkdtemp(join(tmpdir(), 'fw-grade-agent-'));
  try {
    await run('git', ['clone', '-q', repo, work]);
    await gitIn(work, 'checkout', '-q', base);
    await writeFiles(work, edits);
    await gitIn(work, 'add', '-A');
    return await gitIn(work, 'diff', '--cached', '--binary', base);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

export const CALC_BUGGY = `def add(a, b):
    return a - b


def mul(a, b):
    return a * b
`;

export const CALC_FIXED = `def add(a, b):
    return a + b


def mul(a, b):
    return a * b
`;

export const CALC_TESTS = `from calc import add, mul


def test_add():
    assert add(2, 3) == 5


def test_add_negative():
    assert add(-1, -1) == -2


def test_mul():
    assert mul(2, 3) == 6


class TestMul:
    def test_zero(self):
        assert mul(0, 5) == 0
`;

export const PY_FILES = {
  'calc/__init__.py': CALC_BUGGY,
  'tests/test_calc.py': CALC_TESTS,
  'README.md': '# calc\n',
};

export function calcTask(overrides: Partial<TaskInput> = {}): Task {
  return parseTask({
    schemaVersion: 1,
    id: 'calc-add',
    suite: 'grading-tests',
    split: 'train',
    visibility: 'public',
    repo: { kind: 'local', path: '/unused' },
    instruction: 'Fix add.',
    testCommand: 'python3 -m pytest tests',
    failToPass: ['tests/test_calc.py::test_add', 'tests/test_calc.py::test_add_negative'],
    passToPass: ['tests/test_calc.py::test_mul', 'tests/test_calc.py::TestMul::test_zero'],
    testFiles: ['tests/test_calc.py'],
    limits: { commandSeconds: 120 },
    ...overrides,
  });
}
