import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { prepareWorkRepo } from '../../lib/forge/forge-git.ts';
import { gitSync } from '../support/git-fixture.ts';
import { runOf, writeRepo } from './support/forge-fixtures.ts';
import { classifyRun, firstErrorLine, forgeTaskId } from '../../lib/forge/certify-candidate.ts';
import { forgeTemplateStatement } from '../../lib/forge/statement/template-statement.ts';
import { isDerivedArtefact, pathAllowed, testFilesNaming } from '../../lib/forge/find-forge-candidates.ts';
import { invertOneAssertion } from '../../lib/forge/make-canary.ts';
import { probeLines, removedLinesOfPatch } from '../../lib/forge/probe-leaks.ts';
import { fillFilter } from '../../lib/forge/run-suite.ts';
import { parseForgeSpec, type Baseline } from '../../lib/forge/schemas.ts';
import { fileFromId, testFilesOf } from '../../lib/forge/test-files-of.ts';

function baseline(stable: string[], flaky: string[] = []): Baseline {
  return {
    runs: 3,
    outcomes: Object.fromEntries([...stable.map((id) => [id, ['passed', 'passed', 'passed']]), ...flaky.map((id) => [id, ['passed', 'failed', 'passed']])]),
    stable,
    flaky,
    skipped: [],
    collected: stable.length + flaky.length,
    durationsMs: [],
    logKeys: [],
    testFiles: {},
    collectedFiles: [],
  };
}


describe('classifyRun (the broken tree against the baseline)', () => {
  const b = baseline(['t.py::a', 't.py::b', 'u.py::c'], ['t.py::flaky']);

  it('splits stable tests into failToPass and passToPass; flaky tests take no part', () => {
    const c = classifyRun(runOf([['t.py::a', 'failed'], ['t.py::b', 'passed'], ['u.py::c', 'passed'], ['t.py::flaky', 'failed']]), b, 'function-body');
    expect(c).toEqual({ failToPass: ['t.py::a'], passToPass: ['t.py::b', 'u.py::c'], flakyOnlyChanged: false });
  });

  it('counts a test that went missing as failed, never passed — and as a collection crash for a non-file strategy', () => {
    const c = classifyRun(runOf([['t.py::a', 'passed'], ['t.py::b', 'passed']]), b, 'function-body');
    expect(c.failToPass).toEqual(['u.py::c']);
    expect(c.passToPass).not.toContain('u.py::c');
    expect(c.crash).toMatch(/^collection-crash: 1 stable test\(s\) not collected/);
  });

  it('accepts the missing module when the strategy removed that file', () => {
    const run = runOf([['t.py::a', 'passed'], ['t.py::b', 'passed'], ['u', 'error', 'collection failure']], "E   ModuleNotFoundError: No module named 'pkg.util'");
    expect(classifyRun(run, b, 'file', ['pkg/util.py']).crash).toBeUndefined();
    expect(classifyRun(run, b, 'file', ['pkg/other.py']).crash).toMatch(/collection-crash/);
    expect(classifyRun(run, b, 'class', ['pkg/util.py']).crash).toMatch(/collection-crash/);
  });

  it('says the suite does not run when nothing was reported', () => {
    expect(classifyRun(runOf([]), b, 'file').crash).toMatch(/^suite-does-not-run/);
  });

  it('finds the first error line of a log', () => {
    expect(firstErrorLine("collected 0 items\nE   ImportError: cannot import name 'Cart' from 'shop.cart'\n")).toBe("ImportError: cannot import name 'Cart' from 'shop.cart'");
    expect(firstErrorLine('src/a.ts(3,1): error TS2304: Cannot find name')).toMatch(/error TS2304/);
  });
});

describe('leak probes and statements', () => {
  it('probes only specific removed lines', () => {
    const patch = '--- a/x.ts\n+++ b/x.ts\n-  const total = price * quantity;\n-  }\n-  return x;\n+  throw new Error("not implemented");\n';
    expect(probeLines(removedLinesOfPatch(patch))).toEqual(['const total = price * quantity;']);
  });

  it('writes a template statement naming the symbols and failing tests, not the code', () => {
    const s = forgeTemplateStatement({ symbols: ['calc.ts#add'], edits: [{ path: 'src/calc.ts' }], strategy: 'function-body' }, ['test::add adds']);
    expect(s).toMatch(/^Calling `add` does not work/);
    expect(s).toContain('- `add` should add (`test::add adds`)');
    expect(s).not.toContain('src/calc.ts');
  });

  it('makes stable, valid task ids', () => {
    expect(forgeTaskId('my repo', { id: 'calc-add-1a2b3c4d', strategy: 'function-body', symbols: ['src/calc.ts#add'] })).toBe('my-repo.function-body.src-calc.ts-add-1a2b3c4d');
  });
});

describe('canary inversion', () => {
  it('inverts the first assertion that mentions the symbol', () => {
    const text = "assert.equal(other(1), 1);\nassert.equal(add(2, 3), 5);\nexpect(add(1, 1)).toBe(2);\n";
    expect(invertOneAssertion(text, ['add'])).toEqual({ text: "assert.equal(other(1), 1);\nassert.notEqual(add(2, 3), 5);\nexpect(add(1, 1)).toBe(2);\n", line: 2 });
    expect(invertOneAssertion('    assert discount(100, 10) == 90.0\n', ['discount'])?.text).toBe('    assert discount(100, 10) != 90.0\n');
    expect(invertOneAssertion('print(add(1))\n', ['add'])).toBeUndefined();
  });
});

describe('test files of tests (for the filtered runs)', () => {
  it('reads files from pytest and vitest ids, and from JUnit file attributes', () => {
    expect(fileFromId('tests/test_a.py::TestX::test_y[1]')).toBe('tests/test_a.py');
    expect(fileFromId('src/a.test.ts > group > works')).toBe('src/a.test.ts');
    expect(fileFromId('test::add adds')).toBeUndefined();
    const xml = '<testsuites><testcase name="add adds" classname="test" file="/w/test/calc.test.ts"/></testsuites>';
    expect(testFilesOf([{ name: 'j.xml', content: xml }], ['test::add adds', 'tests/t.py::x'], '/w')).toEqual(['test/calc.test.ts', 'tests/t.py']);
    expect(testFilesOf([], ['test::add adds'])).toBeUndefined();
  });

  it('quotes files into the filter command', () => {
    expect(fillFilter('pytest {files}', ["a b.py", "it's.py"])).toBe("pytest 'a b.py' 'it'\\''s.py'");
  });
});

describe('paths and the spec', () => {
  it('applies include, exclude and languages', () => {
    const spec = { includePaths: ['src'], excludePaths: ['src/vendor'], languages: ['python'] };
    expect(pathAllowed('src/a.py', spec)).toBe(true);
    expect(pathAllowed('src/vendor/a.py', spec)).toBe(false);
    expect(pathAllowed('lib/a.py', spec)).toBe(false);
    expect(pathAllowed('src/a.ts', spec)).toBe(false);
  });

  it('knows derived artefacts and which tests name a module', () => {
    expect(isDerivedArtefact('pkg/__pycache__/calc.cpython-312.pyc')).toBe(true);
    expect(isDerivedArtefact('tsconfig.tsbuildinfo')).toBe(true);
    expect(isDerivedArtefact('dist/calc.js')).toBe(true);
    expect(isDerivedArtefact('src/calc.ts')).toBe(false);
    const tests = new Map([['test/a.test.ts', "import { x } from '../src/calc.ts';"], ['tests/test_b.py', 'from shop.cart import Cart\n'], ['test/c.test.ts', 'calculator']]);
    expect(testFilesNaming('calc', tests)).toEqual(['test/a.test.ts']);
    expect(testFilesNaming('cart', tests)).toEqual(['tests/test_b.py']);
  });

  it('validates the forge spec, naming every offending field, with defaults', () => {
    const spec = parseForgeSpec({ repo: { kind: 'local', path: '.' }, testCommand: 'pytest' });
    expect(spec).toMatchObject({ k: 3, maxTasks: 10, split: 'train', suite: 'forge', runner: { kind: 'other' }, canaries: false });
    expect(() => parseForgeSpec({ repo: { kind: 'git', url: 'x', commit: 'zz' }, k: 0 })).toThrow(/repo.commit: a hex commit id; k: /);
    expect(() => parseForgeSpec({ repo: { kind: 'local', path: '.' }, testCommand: 't', runner: { kind: 'pytest', filterCommand: 'pytest' } })).toThrow(/runner.filterCommand/);
  });
});

describe('prepareWorkRepo (the forge never writes to the repository it is given)', () => {
  it('copies a local checkout at a commit, a git URL at a commit, and a plain folder', async () => {
    const repo = await writeRepo({ 'a.py': 'v = 1\n' });
    const first = gitSync(repo, ['rev-parse', 'HEAD']);
    await writeFile(join(repo, 'a.py'), 'v = 2\n');
    gitSync(repo, ['commit', '-q', '-am', 'second']);
    const before = gitSync(repo, ['count-objects', '-v']);
    const scratch = await mkdtemp(join(tmpdir(), 'fw-forge-work-'));
    try {
      const local = await prepareWorkRepo({ kind: 'local', path: repo, commit: first }, join(scratch, 'l'));
      expect(local.baseCommit).toBe(first);
      expect(await readFile(join(local.checkoutDir, 'a.py'), 'utf8')).toBe('v = 1\n');
      const url = await prepareWorkRepo({ kind: 'git', url: `file://${repo}`, commit: first }, join(scratch, 'u'));
      expect(url.baseTree).toBe(local.baseTree);
      // Through the harness's task-source cache: cloned once per URL + commit, reused by the next run.
      const cached = await prepareWorkRepo({ kind: 'git', url: `file://${repo}`, commit: first }, join(scratch, 'c1'), { cacheDir: join(scratch, 'cache') });
      expect(cached.baseTree).toBe(local.baseTree);
      const again = await prepareWorkRepo({ kind: 'git', url: `file://${repo}`, commit: first }, join(scratch, 'c2'), { cacheDir: join(scratch, 'cache') });
      expect(again.baseCommit).toBe(first);
      const head = await prepareWorkRepo({ kind: 'local', path: repo }, join(scratch, 'h'));
      expect(await readFile(join(head.checkoutDir, 'a.py'), 'utf8')).toBe('v = 2\n');
      const plain = await writeRepo({ 'b.ts': 'export const b = 1;\n' }, { git: false });
      const fromPlain = await prepareWorkRepo({ kind: 'local', path: plain }, join(scratch, 'p'));
      expect(await readFile(join(fromPlain.checkoutDir, 'b.ts'), 'utf8')).toBe('export const b = 1;\n');
      await expect(prepareWorkRepo({ kind: 'local', path: repo, commit: 'deadbeef' }, join(scratch, 'x'))).rejects.toThrow(/commit deadbeef is not in/);
      expect(gitSync(repo, ['count-objects', '-v'])).toBe(before);
      await rm(plain, { recursive: true, force: true });
    } finally {
      await rm(scratch, { recursive: true, force: true });
      await rm(repo, { recursive: true, force: true });
    }
  });
});
