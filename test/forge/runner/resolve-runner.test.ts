import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { prepareWorkRepo } from '../../../lib/forge/forge-git.ts';
import { resolveRunner, runnableSpec } from '../../../lib/forge/runner/resolve-runner.ts';
import { parseForgeSpec, type ForgeSpecInput } from '../../../lib/forge/schemas.ts';
import { ValidationError } from '../../../lib/errors.ts';
import { writeGitRepo } from '../../support/git-fixture.ts';

const made: string[] = [];
afterAll(async () => {
  for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** Resolves the runner of a repository made of `files`, with the spec's other fields. */
async function resolveFor(files: Record<string, string>, spec: Omit<ForgeSpecInput, 'repo'> = {}) {
  const repo = await writeGitRepo(files, { prefix: 'fw-runner-repo-' });
  made.push(repo);
  const work = await prepareWorkRepo({ kind: 'local', path: repo }, join(repo, '.git', 'fw-work'));
  const parsed = parseForgeSpec({ repo: { kind: 'local', path: repo }, ...spec });
  return { runner: await resolveRunner(work, parsed), spec: parsed };
}

const PY_TEST = 'from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n';
const SRC_PKG = { 'src/calc/__init__.py': 'def add(a, b):\n    return a + b\n' };
const VITEST_FLAGS = '--reporter=json --outputFile="$FLYWHEEL_REPORT_DIR/vitest.json"';

describe('resolveRunner: a test command derived from the repository', () => {
  it('pytest from pyproject testpaths; a src/ layout whose tests import its package gets PYTHONPATH=src', async () => {
    const { runner, spec } = await resolveFor({ ...SRC_PKG, 'pyproject.toml': '[project]\nname = "calc"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n', 'tests/test_calc.py': PY_TEST });
    expect(runner).toMatchObject({ kind: 'pytest', testCommand: 'PYTHONPATH=src python -m pytest -q tests', filterCommand: 'PYTHONPATH=src python -m pytest -q {files}', env: { PYTHONPATH: 'src' } });
    expect(runner.notes.join('\n')).toMatch(/src\/ layout: the tests import calc from src\//);
    expect(runnableSpec(spec, runner)).toMatchObject({ testCommand: runner.testCommand, runner: { kind: 'pytest', filterCommand: runner.filterCommand }, env: { PYTHONPATH: 'src' } });
  });

  it('reads pytest.ini, setup.cfg and tox.ini sections, and a bare tests folder; no PYTHONPATH where pytest sets pythonpath or nothing imports src', async () => {
    const ini = await resolveFor({ 'pytest.ini': '[pytest]\ntestpaths =\n    tests/unit\n    tests/more\n', 'tests/unit/test_a.py': 'def test_a():\n    pass\n' });
    expect(ini.runner).toMatchObject({ kind: 'pytest', testCommand: 'python -m pytest -q tests/unit tests/more', filterCommand: 'python -m pytest -q {files}', env: {} });
    const cfg = await resolveFor({ ...SRC_PKG, 'setup.cfg': '[metadata]\nname = calc\n\n[tool:pytest]\npythonpath = src\n', 'tests/test_calc.py': PY_TEST });
    expect(cfg.runner).toMatchObject({ kind: 'pytest', testCommand: 'python -m pytest -q tests', env: {} });
    const tox = await resolveFor({ 'tox.ini': '[tox]\nenvlist = py3\n\n[pytest]\naddopts = -ra\n', 'test/test_x.py': 'def test_x():\n    pass\n' });
    expect(tox.runner.testCommand).toBe('python -m pytest -q test');
    const bare = await resolveFor({ 'calc.py': 'def add(a, b):\n    return a + b\n', 'tests/test_calc.py': PY_TEST });
    expect(bare.runner).toMatchObject({ kind: 'pytest', testCommand: 'python -m pytest -q tests', env: {} });
    const given = await resolveFor({ ...SRC_PKG, 'tests/test_calc.py': PY_TEST }, { testCommand: 'python3 -m pytest -q', env: { PYTHONPATH: 'lib' } });
    expect(given.runner).toMatchObject({ testCommand: 'python3 -m pytest -q', env: {} });
  });

  it('vitest, jest and node --test from package.json (the script as written, or npm test when it has steps before the runner)', async () => {
    const vitest = await resolveFor({ 'package.json': JSON.stringify({ devDependencies: { vitest: '^3' } }), 'test/a.test.ts': '' });
    expect(vitest.runner).toMatchObject({ kind: 'vitest', testCommand: `npx vitest run ${VITEST_FLAGS}`, filterCommand: `npx vitest run ${VITEST_FLAGS} {files}` });
    const script = await resolveFor({ 'package.json': JSON.stringify({ scripts: { test: 'vitest run --config vitest.unit.ts' }, devDependencies: { vitest: '^3' } }) });
    expect(script.runner.testCommand).toBe(`npx vitest run ${VITEST_FLAGS} --config vitest.unit.ts`);
    const jest = await resolveFor({ 'package.json': JSON.stringify({ scripts: { test: 'jest' } }) });
    expect(jest.runner).toMatchObject({ kind: 'jest', testCommand: 'npx jest --json --outputFile="$FLYWHEEL_REPORT_DIR/jest.json"' });
    const node = await resolveFor({ 'package.json': JSON.stringify({ scripts: { test: 'node --test test/' } }) });
    expect(node.runner).toMatchObject({ kind: 'node-test', testCommand: 'node --test --test-reporter=junit --test-reporter-destination="$FLYWHEEL_REPORT_DIR/node-junit.xml" test/' });
    expect(node.runner.filterCommand).toBe('node --test --test-reporter=junit --test-reporter-destination="$FLYWHEEL_REPORT_DIR/node-junit.xml" {files}');
    const steps = await resolveFor({ 'package.json': JSON.stringify({ scripts: { test: 'tsc -b && vitest run' }, devDependencies: { vitest: '^3' } }) });
    expect(steps.runner).toMatchObject({ kind: 'vitest', testCommand: `npm test -- ${VITEST_FLAGS}`, filterCommand: `npm test -- ${VITEST_FLAGS} {files}` });
  });

  it('go test -json from go.mod, with a {dirs} filter', async () => {
    const { runner } = await resolveFor({ 'go.mod': 'module example.com/calc\n\ngo 1.22\n', 'calc_test.go': 'package calc\n' });
    expect(runner).toMatchObject({ kind: 'go', testCommand: 'go test -json ./...', filterCommand: 'go test -json {dirs}' });
  });

  it('runs the tests of the one included package when the root has no test configuration', async () => {
    const ts = await resolveFor(
      { 'package.json': JSON.stringify({ private: true, workspaces: ['packages/*'] }), 'packages/url/package.json': JSON.stringify({ devDependencies: { vitest: '^3' } }), 'packages/url/test/a.test.ts': '' },
      { includePaths: ['packages/url/**'] },
    );
    expect(ts.runner).toMatchObject({ kind: 'vitest', workingDir: 'packages/url', testCommand: `cd packages/url && npx vitest run ${VITEST_FLAGS}`, filterCommand: `cd packages/url && npx vitest run ${VITEST_FLAGS} {files}` });
    const py = await resolveFor({ 'README.md': '# mono\n', 'libs/calc/pyproject.toml': '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n', 'libs/calc/src/calc/__init__.py': 'def add(a, b):\n    return a + b\n', 'libs/calc/tests/test_calc.py': PY_TEST }, { includePaths: ['libs/calc'] });
    expect(py.runner).toMatchObject({ kind: 'pytest', workingDir: 'libs/calc', testCommand: 'cd libs/calc && PYTHONPATH=src python -m pytest -q --rootdir=../.. tests', env: {} });
    // Included by its sources only: the package is the nearest folder above them with a project file.
    const bySources = await resolveFor(
      { 'README.md': '# mono\n', 'packages/url/package.json': JSON.stringify({ devDependencies: { vitest: '^3' } }), 'packages/url/src/url.ts': 'export const x = 1;\n', 'packages/url/test/a.test.ts': '' },
      { includePaths: ['packages/url/src/**'] },
    );
    expect(bySources.runner).toMatchObject({ kind: 'vitest', workingDir: 'packages/url', testCommand: `cd packages/url && npx vitest run ${VITEST_FLAGS}` });
  });

  it('throws a ValidationError naming testCommand when nothing is recognised', async () => {
    const error = await resolveFor({ 'README.md': '# nothing to test\n', 'main.c': 'int main(void) { return 0; }\n' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toMatch(/testCommand: required — no test runner recognised/);
  });
});

describe('resolveRunner: a given test command', () => {
  it('gets reporter flags where results would not be readable, its kind inferred, its filter derived from it', async () => {
    const pkg = JSON.stringify({ scripts: { test: 'vitest' }, devDependencies: { vitest: '^3' } });
    const plain = await resolveFor({ 'package.json': pkg }, { testCommand: 'npx vitest run' });
    expect(plain.runner).toMatchObject({ kind: 'vitest', testCommand: `npx vitest run ${VITEST_FLAGS}`, filterCommand: `npx vitest run ${VITEST_FLAGS} {files}` });
    expect(plain.runner.notes).toContain('runner kind vitest, read from the test command');
    const npm = await resolveFor({ 'package.json': pkg }, { testCommand: 'npm test' });
    expect(npm.runner).toMatchObject({ kind: 'vitest', testCommand: `npm test -- ${VITEST_FLAGS}` });
    const pytest = await resolveFor({ 'tests/test_a.py': 'def test_a():\n    pass\n' }, { testCommand: 'PYTHONPATH=src python3 -m pytest -q tests' });
    expect(pytest.runner).toMatchObject({ kind: 'pytest', testCommand: 'PYTHONPATH=src python3 -m pytest -q tests', filterCommand: 'PYTHONPATH=src python3 -m pytest -q {files}', env: {} });
    const piped = await resolveFor({ 'tests/test_a.py': '' }, { testCommand: 'python -m pytest | tee log', runner: { kind: 'pytest' } });
    expect(piped.runner.filterCommand).toBeUndefined();
    expect(piped.runner.notes.join('\n')).toMatch(/no first-pass filter/);
    const own = await resolveFor({ 'tests/test_a.py': '' }, { testCommand: 'make check', runner: { kind: 'pytest', filterCommand: 'make check FILES="{files}"' } });
    expect(own.runner).toMatchObject({ kind: 'pytest', testCommand: 'make check', filterCommand: 'make check FILES="{files}"' });
  });
});
