import { describe, expect, it } from 'vitest';
import { runnerSectionChanged } from '../../../lib/harness/grading/runner-sections.ts';
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
