/**
 * The pytest result stream's parser and cross-checks (`lib/harness/grading/pytest-stream.ts`), on hand-made streams:
 * what a forger without the nonce, an after-the-fact writer, or a rewritten report looks like to the grader.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkPytestStream, parsePytestStream } from '../../../lib/harness/grading/pytest-stream.ts';
import { historyNeed } from '../../../lib/harness/sandbox/git-observations.ts';

const NONCE = '0123456789abcdef0123456789abcdef';
const line = (obj: Record<string, unknown>, nonce = NONCE) => `\n@@flywheel-stream ${nonce} ${JSON.stringify(obj)}\n`;
const HEADER = { t: 'header', pytest: '/env/lib/python3.11/site-packages/pytest/__init__.py', version: '9', python: '/env/bin/python3', cwd: '/ws', mode: 'm', junit: '/ws/.flywheel-grading-1/pytest-stream-1.xml' };
const phases = (id: string, call: string) => [
  line({ t: 'r', id, when: 'setup', outcome: 'passed', raw: 'passed' }),
  line({ t: 'r', id, when: 'call', outcome: call, raw: call }),
  line({ t: 'r', id, when: 'teardown', outcome: 'passed', raw: 'passed' }),
];
const junit = (cases: Array<[string, boolean]>) =>
  `<?xml version="1.0"?><testsuites><testsuite name="pytest">${cases.map(([n, ok]) => `<testcase classname="tests.test_calc" name="${n}" file="tests/test_calc.py">${ok ? '' : '<failure message="x"/>'}</testcase>`).join('')}</testsuite></testsuites>`;
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

function run(parts: { stderr: string[]; junitText?: string; stdout?: string }) {
  const stream = parsePytestStream(parts.stderr.join(''), NONCE);
  const files = parts.junitText === undefined ? [] : [{ name: '.flywheel-grading-1/pytest-stream-1.xml', content: parts.junitText }];
  return checkPytestStream({ stream, files, stdout: parts.stdout ?? '', workdir: '/ws' });
}

describe('pytest result stream checks', () => {
  const goodJunit = junit([['test_add', false], ['test_mul', true]]);
  const honest = [line(HEADER), ...phases('tests/test_calc.py::test_add', 'failed'), ...phases('tests/test_calc.py::test_mul', 'passed'), line({ t: 'end', exitstatus: 1, junitSha256: sha(goodJunit) }), line({ t: 'exit' })];

  it('an honest run agrees with its JUnit file and its printed summary', () => {
    const check = run({ stderr: honest, junitText: goodJunit, stdout: 'F.\n1 failed, 1 passed in 0.02s\n' });
    expect(check.integrity).toEqual([]);
    expect(check.failures).toEqual([]);
    expect(check.report.tests).toEqual([
      { id: 'tests/test_calc.py::test_add', outcome: 'failed' },
      { id: 'tests/test_calc.py::test_mul', outcome: 'passed' },
    ]);
  });

  it('lines without the nonce, lines after the session, and a later different outcome are integrity failures; the first outcome stands', () => {
    const forged = [line(HEADER), line({ t: 'r', id: 'tests/test_calc.py::test_add', when: 'call', outcome: 'passed', raw: 'passed' }, 'f'.repeat(32)), ...honest.slice(1, -2), line({ t: 'r', id: 'tests/test_calc.py::test_add', when: 'call', outcome: 'passed', raw: 'passed' }), ...honest.slice(-2), line({ t: 'r', id: 'tests/test_calc.py::test_add', when: 'call', outcome: 'passed', raw: 'passed' })];
    const check = run({ stderr: forged, junitText: goodJunit });
    expect(check.integrity).toEqual([
      expect.stringMatching(/^stream line with a wrong nonce/),
      'tests/test_calc.py::test_add (call) reported failed, then passed',
      'test report outside a pytest session: tests/test_calc.py::test_add',
    ]);
    expect(check.report.tests[0]).toEqual({ id: 'tests/test_calc.py::test_add', outcome: 'failed' });
  });

  it('a JUnit file rewritten after the session, or one that disagrees with the stream, or a summary that does not match', () => {
    const rewritten = junit([['test_add', true], ['test_mul', true]]);
    expect(run({ stderr: honest, junitText: rewritten }).integrity).toEqual([
      'junit-rewritten: pytest-stream-1.xml changed after pytest session 1 ended',
      'report-disagreement: pytest-stream-1.xml: tests/test_calc.py::test_add: stream failed, junit passed',
    ]);
    expect(run({ stderr: honest, junitText: undefined }).integrity).toEqual(['junit-removed: pytest-stream-1.xml was written by session 1 and is gone']);
    expect(run({ stderr: honest, junitText: goodJunit, stdout: '2 passed in 0.01s\n' }).integrity).toEqual([
      'runner-summary-disagreement: pytest printed 2 passed, 0 failed; the stream has 1 passed, 1 failed',
    ]);
  });

  it('a runner imported from the workspace, a tamper line, and a session cut short', () => {
    const shadowed = [line({ ...HEADER, pytest: '/ws/pytest.py' }), line({ t: 'tamper', what: 'patched:TestReport.from_item_and_call', detail: 'tests/test_calc.py::test_add' }), ...phases('tests/test_calc.py::test_add', 'passed').slice(0, 1)];
    const check = run({ stderr: shadowed });
    expect(check.integrity).toEqual(['patched:TestReport.from_item_and_call (tests/test_calc.py::test_add)', 'runner-shadowed: pytest was imported from the workspace (/ws/pytest.py)']);
    expect(check.failures).toEqual(['test-stream-incomplete: pytest session 1 ended without its end line (crash, os._exit or killed)']);
    // Only setup was reported: never a pass.
    expect(check.report.tests).toEqual([{ id: 'tests/test_calc.py::test_add', outcome: 'error' }]);
  });

  it("the audit hook's soft lines (frame access) are tampering from the agent's files, notes from the repository's untouched ones", () => {
    const soft = (file: string) => line({ t: 'tamper', what: 'frame-access:sys._getframe', detail: 'x', file, soft: true });
    const stderr = [...honest.slice(0, -2), soft('calc/__init__.py'), soft('vendor/attrs/_make.py'), line({ t: 'tamper', what: 'gc-walk:gc.get_referrers', detail: 'x', file: 'vendor/attrs/_make.py' }), ...honest.slice(-2)];
    const stream = parsePytestStream(stderr.join(''), NONCE);
    const check = checkPytestStream({ stream, files: [{ name: '.flywheel-grading-1/pytest-stream-1.xml', content: goodJunit }], stdout: '', workdir: '/ws', baseFiles: new Set(['vendor/attrs/_make.py']) });
    expect(check.integrity).toEqual(['gc-walk:gc.get_referrers (x) in vendor/attrs/_make.py', 'frame-access:sys._getframe (x) in calc/__init__.py']);
    expect(check.notes).toEqual(['audit:frame-access:sys._getframe (x) in vendor/attrs/_make.py']);
  });
});

describe('git commands that need history', () => {
  it.each([
    ['status', 0, false],
    ['diff', 0, false],
    ['diff --cached', 0, false],
    ['diff HEAD -- calc.py', 0, false],
    ['log -1', 0, false],
    ['log -n 1 --stat', 0, false],
    ['show HEAD', 0, false],
    ['show HEAD:calc.py', 0, false],
    ['show', 0, false],
    ['describe --tags --always --dirty', 0, false],
    ['describe --tags', 128, false],
    ['rev-parse HEAD', 0, false],
    ['rev-parse --show-toplevel', 0, false],
    ['-C sub log --oneline -1', 0, false],
    ['stash', 0, false],
    ['branch', 0, false],
    ['log', 0, true],
    ['log --oneline -5', 0, true],
    ['log --all -p -- calc.py', 0, true],
    ['show HEAD~1', 0, true],
    ['show 1a2b3c4:calc.py', 128, true],
    ['diff HEAD~1', 0, true],
    ['checkout abc1234 -- calc.py', 1, true],
    ['reset --hard HEAD~2', 0, true],
    ['reflog', 0, true],
    ['fetch origin', 1, true],
    ['branch -a', 0, true],
    ['describe v1.2~1', 0, true],
  ] as const)('git %s (exit %i): history needed %s', (cmd, exitCode, needed) => {
    expect(historyNeed(cmd.split(' '), exitCode) !== undefined).toBe(needed);
  });
});
