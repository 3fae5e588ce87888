import { execFileSync, execSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generatePythonSrcRepo, PYTHON_SRC_TEST_COMMAND, PYTHON_SRC_TEST_COUNT } from '../../../bench/forge/generate-python-src.ts';
import { generateTsPackage, TS_PACKAGE_TEST_COUNT } from '../../../bench/forge/generate-ts-package.ts';

/** The benchmark's generated repositories are what they claim: deterministic, their suites pass with the README-style command. */
describe('the forge benchmark generators', () => {
  const root = mkdtempSync(join(tmpdir(), 'fw-bench-generators-'));
  afterAll(() => rm(root, { recursive: true, force: true }));
  const fresh = (name: string) => {
    const dir = join(root, name);
    mkdirSync(dir);
    return dir;
  };

  it('the Python src/ library: the same commit every time, every test passing under `PYTHONPATH=src python3 -m pytest -q`', () => {
    const a = generatePythonSrcRepo(fresh('py-a'), { workRounds: 0 });
    const b = generatePythonSrcRepo(fresh('py-b'), { workRounds: 0 });
    expect(a.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(b.commit).toBe(a.commit);
    const out = execSync(`${PYTHON_SRC_TEST_COMMAND} -p no:cacheprovider`, { cwd: join(root, 'py-a'), env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } }).toString();
    expect(out).toMatch(new RegExp(`\\b${PYTHON_SRC_TEST_COUNT} passed\\b`));
    // The parametrize id with a "." and a "/" is collected whole.
    const collected = execSync(`${PYTHON_SRC_TEST_COMMAND} -p no:cacheprovider --collect-only`, { cwd: join(root, 'py-a'), env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } }).toString();
    expect(collected).toContain('tests/test_paths.py::test_normalize_path[dot/slash.case]');
  }, 60_000);

  it('the TypeScript package: vitest passes every test, node_modules is an untracked link to a prepared copy', () => {
    const dir = fresh('ts');
    generateTsPackage(dir);
    expect(execFileSync('git', ['status', '--porcelain', '--ignored'], { cwd: dir }).toString()).toBe('!! node_modules\n');
    expect(realpathSync(join(dir, 'node_modules'))).toBe(realpathSync(join(import.meta.dirname, '../../../node_modules')));
    const report = join(root, 'vitest.json');
    execSync(`npx vitest run --reporter=json --outputFile=${report}`, { cwd: dir, stdio: 'ignore' });
    const result = JSON.parse(readFileSync(report, 'utf8')) as { numTotalTests: number; numPassedTests: number; testResults: Array<{ assertionResults: Array<{ fullName: string }> }> };
    expect(result.numTotalTests).toBe(TS_PACKAGE_TEST_COUNT);
    expect(result.numPassedTests).toBe(TS_PACKAGE_TEST_COUNT);
    const titles = result.testResults.flatMap((f) => f.assertionResults.map((t) => t.fullName));
    expect(titles).toContain('normalizePath a/./b → a/b');
  }, 60_000);
});
