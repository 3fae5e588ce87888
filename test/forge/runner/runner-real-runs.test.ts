/**
 * The resolved runner's commands run for real (pytest and vitest as child processes, through the forge's own
 * `runSuite` and report readers) on repositories written here: a Python `src/` layout given no flags, and a vitest
 * package given plain `npx vitest run`. The namespace sandbox only sees what an environment binds, so these run in a
 * plain folder (`openPlainDirSandbox`); `node_modules` is a link to this repository's.
 */
import { rm, symlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { prepareWorkRepo, type WorkRepo } from '../../../lib/forge/forge-git.ts';
import { resolveRunner } from '../../../lib/forge/runner/resolve-runner.ts';
import { fillFilter, runSuite } from '../../../lib/forge/run-suite.ts';
import { parseForgeSpec, type ForgeSpecInput } from '../../../lib/forge/schemas.ts';
import { fileFromId } from '../../../lib/forge/test-files-of.ts';
import { testIdKey } from '../../../lib/harness/grading/test-id.ts';
import type { SandboxSession } from '../../../lib/harness/sandbox/sandbox.ts';
import { writeGitRepo } from '../../support/git-fixture.ts';
import { openPlainDirSandbox } from '../../support/plain-dir-sandbox.ts';

const NODE_MODULES = resolve(import.meta.dirname, '../../../node_modules');
const made: string[] = [];
const sessions: SandboxSession[] = [];
afterAll(async () => {
  for (const s of sessions.splice(0)) await s.close();
  for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function workRepoOf(files: Record<string, string>): Promise<{ work: WorkRepo; repo: string }> {
  const repo = await writeGitRepo(files, { prefix: 'fw-runner-real-' });
  made.push(repo);
  return { repo, work: await prepareWorkRepo({ kind: 'local', path: repo }, join(repo, '.git', 'fw-work')) };
}

async function sandboxOf(work: WorkRepo): Promise<SandboxSession> {
  const session = await openPlainDirSandbox({ fromDir: work.checkoutDir });
  sessions.push(session);
  return session;
}

const outcomes = (tests: Map<string, { id: string; outcome: string }>) => Object.fromEntries([...tests.values()].map((t) => [t.id, t.outcome]));

describe('a Python src/ layout, no flags', () => {
  it('derives pytest with PYTHONPATH=src; the suite and the derived filter run the tree’s code, not an installed copy', async () => {
    // A package name no interpreter on this machine has installed: only PYTHONPATH=src makes it importable.
    const pkg = 'fw_h1_srclayout_calc';
    const { work, repo } = await workRepoOf({
      'pyproject.toml': `[project]\nname = "${pkg}"\nversion = "0.1.0"\n`,
      [`src/${pkg}/__init__.py`]: 'def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n',
      'tests/test_add.py': `from ${pkg} import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_add_negative():\n    assert add(-2, 1) == -1\n`,
      'tests/test_mul.py': `import ${pkg}\n\n\nclass TestMul:\n    def test_mul(self):\n        assert ${pkg}.mul(2, 3) == 6\n`,
    });
    const input: ForgeSpecInput = { repo: { kind: 'local', path: repo } };
    const runner = await resolveRunner(work, parseForgeSpec(input));
    expect(runner).toMatchObject({ kind: 'pytest', testCommand: 'PYTHONPATH=src python -m pytest -q tests', filterCommand: 'PYTHONPATH=src python -m pytest -q {files}', env: { PYTHONPATH: 'src' } });

    const session = await sandboxOf(work);
    const full = await runSuite(session, { command: runner.testCommand, timeoutMs: 120_000 });
    expect(full.exitCode, full.log).toBe(0);
    expect(outcomes(full.tests)).toEqual({
      'tests/test_add.py::test_add': 'passed',
      'tests/test_add.py::test_add_negative': 'passed',
      'tests/test_mul.py::TestMul::test_mul': 'passed',
    });
    const first = await runSuite(session, { command: fillFilter(runner.filterCommand!, ['tests/test_mul.py']), timeoutMs: 120_000 });
    expect(outcomes(first.tests)).toEqual({ 'tests/test_mul.py::TestMul::test_mul': 'passed' });

    // What the README's default filter did: without the test command's environment the package does not import.
    const bare = await runSuite(session, { command: fillFilter('python -m pytest {files}', ['tests/test_mul.py']), timeoutMs: 120_000 });
    expect(bare.exitCode).not.toBe(0);
    expect(bare.log).toMatch(new RegExp(`No module named '${pkg}'`));
  }, 180_000);
});

describe('a Python package inside a monorepo, named by includePaths', () => {
  it('runs pytest in the package folder with repository-relative ids; the filter takes repository-relative files', async () => {
    const pkg = 'fw_h1_mono_calc';
    const { work, repo } = await workRepoOf({
      'README.md': '# mono\n',
      'libs/calc/pyproject.toml': '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
      [`libs/calc/src/${pkg}/__init__.py`]: 'def add(a, b):\n    return a + b\n',
      'libs/calc/tests/test_add.py': `from ${pkg} import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n`,
      'libs/calc/tests/test_more.py': `from ${pkg} import add\n\n\ndef test_more():\n    assert add(1, 1) == 2\n`,
    });
    const runner = await resolveRunner(work, parseForgeSpec({ repo: { kind: 'local', path: repo }, includePaths: ['libs/calc'] }));
    expect(runner).toMatchObject({ workingDir: 'libs/calc', testCommand: 'cd libs/calc && PYTHONPATH=src python -m pytest -q --rootdir=../.. tests' });
    const session = await sandboxOf(work);
    const full = await runSuite(session, { command: runner.testCommand, timeoutMs: 120_000 });
    expect(outcomes(full.tests), full.log).toEqual({ 'libs/calc/tests/test_add.py::test_add': 'passed', 'libs/calc/tests/test_more.py::test_more': 'passed' });
    const file = fileFromId('libs/calc/tests/test_more.py::test_more')!;
    const first = await runSuite(session, { command: fillFilter(runner.filterCommand!, [file]), timeoutMs: 120_000 });
    expect(outcomes(first.tests), first.log).toEqual({ 'libs/calc/tests/test_more.py::test_more': 'passed' });
  }, 180_000);
});

describe('a vitest package given plain `npx vitest run`', () => {
  it('adds the JSON reporter; every title is its own test id, and the derived filter runs one file', async () => {
    const { work, repo } = await workRepoOf({
      'package.json': JSON.stringify({ name: 'tiny-url', type: 'module', devDependencies: { vitest: '*' } }),
      '.gitignore': 'node_modules\n',
      'src/url.ts': "export const withHttp = (u: string) => (u.startsWith('http') ? u : `http://${u}`);\n",
      'test/url.test.ts': [
        "import { describe, expect, it } from 'vitest';",
        "import { withHttp } from '../src/url.ts';",
        "describe('withHttp', () => {",
        "  it('a.b', () => expect(withHttp('a.b')).toBe('http://a.b'));",
        "  it('a/b', () => expect(withHttp('a/b')).toBe('http://a/b'));",
        "  it('keeps https://x.ts', () => expect(withHttp('https://x.ts')).toBe('https://x.ts'));",
        '});',
        '',
      ].join('\n'),
      'test/other.test.ts': "import { expect, it } from 'vitest';\nit('a.b', () => expect(1).toBe(1));\n",
    });
    const runner = await resolveRunner(work, parseForgeSpec({ repo: { kind: 'local', path: repo }, testCommand: 'npx vitest run' }));
    const flags = '--reporter=json --outputFile="$FLYWHEEL_REPORT_DIR/vitest.json"';
    expect(runner).toMatchObject({ kind: 'vitest', testCommand: `npx vitest run ${flags}`, filterCommand: `npx vitest run ${flags} {files}` });

    const session = await sandboxOf(work);
    await symlink(NODE_MODULES, join(session.workdir, 'node_modules'));
    const full = await runSuite(session, { command: runner.testCommand, timeoutMs: 120_000 });
    expect(full.exitCode, full.log).toBe(0);
    expect(full.reports.map((r) => r.format)).toEqual(['jest-json']);
    expect(outcomes(full.tests)).toEqual({
      'test/url.test.ts > withHttp > a.b': 'passed',
      'test/url.test.ts > withHttp > a/b': 'passed',
      'test/url.test.ts > withHttp > keeps https://x.ts': 'passed',
      'test/other.test.ts > a.b': 'passed',
    });
    // Four tests reported, four keys: no title was split into path parts.
    expect(new Set([...full.tests.values()].map((t) => testIdKey(t.id))).size).toBe(4);
    expect([...full.tests.values()].map((t) => fileFromId(t.id)).sort()).toEqual(['test/other.test.ts', 'test/url.test.ts', 'test/url.test.ts', 'test/url.test.ts']);

    const first = await runSuite(session, { command: fillFilter(runner.filterCommand!, ['test/other.test.ts']), timeoutMs: 120_000 });
    expect(outcomes(first.tests)).toEqual({ 'test/other.test.ts > a.b': 'passed' });
  }, 180_000);
});
