import { describe, expect, it } from 'vitest';
import { dependencySectionChanged, runnerSectionChanged } from '../../../lib/harness/grading/runner-sections.ts';
import { classifyPath, isRunnerConfigPath, isTestPath } from '../../../lib/harness/grading/test-paths.ts';

describe('test paths', () => {
  it('recognises test files across languages, and not ordinary source', () => {
    for (const p of ['tests/test_calc.py', 'pkg/calc_test.py', 'calc_test.go', 'src/a.test.ts', 'src/a.spec.jsx', 'src/__tests__/a.js', 'test/fixtures/data.json', 'src/main/java/FooTest.java', 'spec/foo_spec.rb']) {
      expect(isTestPath(p), p).toBe(true);
    }
    for (const p of ['calc/__init__.py', 'src/testing_utils.ts', 'lib/contest.py', 'src/attest.go', 'README.md']) expect(isTestPath(p), p).toBe(false);
  });

  it('recognises runner configuration files', () => {
    for (const p of ['conftest.py', 'a/b/conftest.py', 'pytest.ini', 'tox.ini', 'setup.cfg', 'vitest.config.ts', 'web/vite.config.mjs', 'jest.config.js', 'package.json', 'pyproject.toml', 'sitecustomize.py', 'site-packages/x.pth', '.mocharc.yml']) {
      expect(isRunnerConfigPath(p), p).toBe(true);
    }
    expect(isRunnerConfigPath('src/config.ts')).toBe(false);
  });

  it("classifies the task's own test files first, including files under a listed directory", () => {
    expect(classifyPath('tests/test_calc.py', ['tests/test_calc.py'])).toBe('task-test-file');
    expect(classifyPath('./tests/data/x.txt', ['tests/data'])).toBe('task-test-file');
    expect(classifyPath('tests/conftest.py', [])).toBe('runner-config');
    expect(classifyPath('tests/test_other.py', [])).toBe('test-file');
    expect(classifyPath('calc/__init__.py', ['tests/test_calc.py'])).toBeUndefined();
  });

  it('classifies the files that choose the environment as dependency manifests', () => {
    for (const p of ['requirements.txt', 'requirements-dev.txt', 'test-requirements.txt', 'requirements/test.txt', 'constraints.txt', 'setup.py', 'Pipfile', 'poetry.lock', 'uv.lock', 'package-lock.json', 'yarn.lock', 'pnpm-lock.yaml', 'web/package-lock.json']) {
      expect(classifyPath(p, []), p).toBe('dependency-manifest');
    }
    // setup.cfg stays runner config (it holds [tool:pytest] too); pyproject.toml and package.json are sectioned.
    expect(classifyPath('setup.cfg', [])).toBe('runner-config');
    expect(classifyPath('pyproject.toml', [])).toBe('runner-config');
    expect(classifyPath('docs/conf.py', [])).toBeUndefined();
  });
});

describe('dependencySectionChanged', () => {
  it('pyproject.toml: [project] dependencies, extras, dependency groups and build requirements count; metadata does not', () => {
    const base = '[project]\nname = "x"\nversion = "1"\ndependencies = []\n\n[tool.pytest.ini_options]\naddopts = "-q"\n';
    expect(dependencySectionChanged('pyproject.toml', base, base.replace('dependencies = []', 'dependencies = ["attrs"]'))).toBe(true);
    expect(dependencySectionChanged('pyproject.toml', base, `${base}\n[project.optional-dependencies]\ntest = ["pytest-x"]\n`)).toBe(true);
    expect(dependencySectionChanged('pyproject.toml', base, `${base}\n[dependency-groups]\ndev = ["pytest-x"]\n`)).toBe(true);
    expect(dependencySectionChanged('pyproject.toml', base, base.replace('version = "1"', 'version = "2"'))).toBe(false);
    expect(dependencySectionChanged('pyproject.toml', base, 'not [valid toml')).toBe(true);
  });

  it('package.json: dependency maps and overrides count; scripts do not', () => {
    const base = JSON.stringify({ name: 'x', scripts: { build: 'tsc' }, dependencies: {} });
    expect(dependencySectionChanged('package.json', base, JSON.stringify({ name: 'x', scripts: { build: 'tsc' }, dependencies: { zod: '^4' } }))).toBe(true);
    expect(dependencySectionChanged('package.json', base, JSON.stringify({ name: 'x', scripts: { build: 'tsc' }, dependencies: {}, overrides: { a: '1' } }))).toBe(true);
    expect(dependencySectionChanged('package.json', base, JSON.stringify({ name: 'x', scripts: { build: 'tsc -b' }, dependencies: {} }))).toBe(false);
  });
});

describe('runnerSectionChanged', () => {
  it('pyproject.toml: only [tool.pytest] and pytest plugin entry points count', () => {
    const base = '[project]\nname = "x"\ndependencies = []\n\n[tool.pytest.ini_options]\naddopts = "-q"\n';
    expect(runnerSectionChanged('pyproject.toml', base, base.replace('dependencies = []', 'dependencies = ["attrs"]'))).toBe(false);
    expect(runnerSectionChanged('pyproject.toml', base, base.replace('"-q"', '"-q -k not slow"'))).toBe(true);
    expect(runnerSectionChanged('pyproject.toml', base, `${base}\n[project.entry-points.pytest11]\ncheat = "x.plugin"\n`)).toBe(true);
    expect(runnerSectionChanged('pyproject.toml', base, 'not [valid toml')).toBe(true);
  });

  it('package.json: jest/vitest keys and the test scripts count, dependencies do not', () => {
    const base = JSON.stringify({ name: 'x', scripts: { test: 'vitest run', build: 'tsc' }, dependencies: {} });
    const withDep = JSON.stringify({ name: 'x', scripts: { test: 'vitest run', build: 'tsc -b' }, dependencies: { zod: '^4' } });
    expect(runnerSectionChanged('package.json', base, withDep)).toBe(false);
    expect(runnerSectionChanged('package.json', base, JSON.stringify({ name: 'x', scripts: { test: 'echo ok' } }))).toBe(true);
    expect(runnerSectionChanged('package.json', base, JSON.stringify({ name: 'x', scripts: { test: 'vitest run', build: 'tsc' }, jest: { testPathIgnorePatterns: ['.'] } }))).toBe(true);
    expect(runnerSectionChanged('package.json', undefined, base)).toBe(true);
  });
});
