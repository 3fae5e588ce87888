/**
 * The pure parts of certification's sharper checks: which test files the first pass may run, how much of a suite a
 * broken tree fails and with what, which failing tests held in every run; and the code lines removed-line counts read.
 */
import { describe, expect, it } from 'vitest';
import { collectedTestFiles, stableBrokenOutcome, suiteBreakage } from '../../../lib/forge/certify-candidate.ts';
import { codeLineSet } from '../../../lib/forge/parse/code-lines.ts';
import { parseTypeScript } from '../../../lib/forge/parse/parse-typescript.ts';
import { runOf } from '../support/forge-fixtures.ts';


describe('collectedTestFiles', () => {
  it('keeps the files the runner collected, matching paths relative to a package folder', () => {
    expect(collectedTestFiles(['tests/test_a.py', 'tests/typing_stub.py', 'tests/conftest.py'], ['tests/test_a.py', 'tests/test_b.py'])).toEqual(['tests/test_a.py']);
    expect(collectedTestFiles(['packages/url/test/url.test.ts', 'packages/url/test/helpers.ts'], ['test/url.test.ts'])).toEqual(['packages/url/test/url.test.ts']);
    expect(collectedTestFiles(['test/url.test.ts'], ['packages/url/test/url.test.ts'])).toEqual(['test/url.test.ts']);
    expect(collectedTestFiles(['test/helpers.ts'], ['test/url.test.ts'])).toEqual([]);
  });
});

describe('suiteBreakage', () => {
  const stable = ['t.py::a', 't.py::b', 't.py::c', 'u.py::d'];

  it('gives the failing share and the message most failures share (a near import error)', () => {
    const run = runOf([
      ['t.py::a', 'error', "ImportError: cannot import name 'x' from 'pkg'\nmore"],
      ['t.py::b', 'error', "ImportError: cannot import name 'x' from 'pkg'"],
      ['t.py::c', 'failed', 'AssertionError: 1 != 2'],
      ['u.py::d', 'passed'],
    ]);
    expect(suiteBreakage(run, { stable }, ['t.py::a', 't.py::b', 't.py::c'])).toEqual({ share: 0.75, dominant: { message: "ImportError: cannot import name 'x' from 'pkg'", count: 2 } });
  });

  it('counts tests gone missing under one message, and falls back to the log’s first error line', () => {
    expect(suiteBreakage(runOf([['u.py::d', 'passed']]), { stable }, ['t.py::a', 't.py::b']).dominant).toEqual({ message: 'not reported (the test went missing)', count: 2 });
    const silent = runOf([['t.py::a', 'failed'], ['u.py::d', 'passed']], 'collecting ...\nE   ModuleNotFoundError: No module named pkg.core\n');
    expect(suiteBreakage(silent, { stable }, ['t.py::a'])).toEqual({ share: 0.25, dominant: { message: 'ModuleNotFoundError: No module named pkg.core', count: 1 } });
  });
});

describe('stableBrokenOutcome', () => {
  it('keeps failures that held in every rerun (missing counts as failed), drops those that passed once, and pass-to-pass tests that failed once', () => {
    const reruns = [
      runOf([['t::a', 'failed'], ['t::b', 'passed'], ['t::p', 'passed']]),
      runOf([['t::b', 'failed'], ['t::p', 'error'], ['t::q', 'passed']]),
    ];
    expect(stableBrokenOutcome(['t::a', 't::b'], ['t::p', 't::q', 'other::r'], reruns)).toEqual({ failToPass: ['t::a'], passToPass: ['t::q', 'other::r'], flakyDropped: ['t::b', 't::p'] });
    expect(stableBrokenOutcome(['t::a'], ['t::q'], [])).toEqual({ failToPass: ['t::a'], passToPass: ['t::q'], flakyDropped: [] });
  });
});

describe('codeLineSet (TypeScript)', () => {
  it('counts lines holding tokens: not comments, not blank; template literals and regular expressions are code', () => {
    const text = [
      '/** Doc. */', // 1
      'export function f(x: string): string {', // 2
      '  // a comment', // 3
      '', // 4
      '  const re = /\\/\\//g; /* trailing */', // 5
      '  const t = `a ${x.replace(re, "}")} b', // 6
      '    still the template`;', // 7
      '  /*', // 8
      '   * block', // 9
      '   */', // 10
      '  return t;', // 11
      '}', // 12
    ].join('\n');
    expect([...codeLineSet(parseTypeScript('src/f.ts', text))].sort((a, b) => a - b)).toEqual([2, 5, 6, 7, 11, 12]);
  });
});
