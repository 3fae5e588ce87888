/**
 * The leakage check with hints that leak each kind of secret (a hidden test's id and name, its string and number
 * literals, a line of the reference patch, a line of a file the agent never saw) and hints that do not (the tool
 * list, a person's comment, a secret the student had already seen).
 */
import { describe, expect, it } from 'vitest';
import { checkHintLeakage, taskSecrets, testNameOf } from '../../lib/training/decisions/check-hint-leakage.ts';
import { TASK } from './decisions-support.ts';

const now = new Date('2026-12-03T12:00:00Z');
const secrets = taskSecrets(TASK);
const kinds = (hint: string, seen?: string) => checkHintLeakage(hint, { ...secrets, ...(seen !== undefined ? { seen } : {}) }, now).findings.map((f) => f.kind);

describe('the secrets of a task', () => {
  it('the hidden test ids and names, the literals of the test patch, the lines of the gold patch', () => {
    expect(secrets.testIds).toEqual(['test/add.test.js > adds_negative_numbers']);
    expect(secrets.testNames).toEqual(['adds_negative_numbers']);
    expect(secrets.testLiterals.map((l) => l.key)).toEqual(expect.arrayContaining(['s:three-point-zero', 'n:-40000000', 'n:-39999998']));
    expect(secrets.patchLines).toEqual(['export const add = (a, b) => Number(a) + Number(b);']);
    expect(secrets.fileLines).toContain('expect(add(-40000000, 2)).toBe(-39999998);');
    expect(testNameOf('tests/test_x.py::TestA::test_b[1-2]')).toBe('test_b');
  });
});

describe('hints that leak', () => {
  it('a hidden test id, and a hidden test name', () => {
    expect(kinds('Make test/add.test.js > adds_negative_numbers pass.')).toContain('test-id');
    expect(kinds('The adds_negative_numbers test fails; look at negatives.')).toEqual(expect.arrayContaining(['test-name']));
  });

  it('a string literal and a number literal of the hidden tests', () => {
    expect(kinds('format should print three-point-zero')).toEqual(['test-literal']);
    expect(kinds('try adding -40000000 and 2')).toEqual(['test-literal']);
  });

  it('a line of the reference patch', () => {
    expect(kinds('Write: export const add = (a, b) => Number(a) + Number(b);')).toEqual(['reference-patch-line']);
  });

  it('a line of a file the agent never saw (the hidden test file)', () => {
    const found = checkHintLeakage("The test says: expect(add(-40000000, 2)).toBe(-39999998);", secrets, now);
    expect(found.passed).toBe(false);
    expect(found.findings.map((f) => f.kind)).toEqual(expect.arrayContaining(['test-literal', 'unseen-file-content']));
  });

  it('a hint not written by code fails when the task’s secrets cannot be gathered; a rule’s hint does not', () => {
    const unknown = { ...secrets, unavailable: 'the task is not in the registry' };
    expect(checkHintLeakage('Read the code first.', unknown, now).findings).toEqual([{ kind: 'secrets-unavailable', text: 'the task is not in the registry' }]);
    expect(checkHintLeakage('Read the code first.', unknown, now, { byRule: true }).passed).toBe(true);
  });
});

describe('hints that do not leak', () => {
  it('the tool list, a person’s comment, the sandbox rules', () => {
    for (const hint of [
      'There is no tool named "run_tests". The tools that exist are:\n- bash: Run a shell command in the workspace.\n- read_file: Read a file of the workspace.',
      'Never delete tests; fix the code.',
      'The network is closed in this sandbox: pypi.org cannot be reached.',
      'add() must add numbers, also negative ones.',
    ]) {
      const check = checkHintLeakage(hint, secrets, now);
      expect(check).toEqual({ passed: true, findings: [], checkedAt: '2026-12-03T12:00:00.000Z' });
    }
  });

  it('a secret the student saw before the decision (its own tool output) is not a leak', () => {
    const hint = 'format should print three-point-zero';
    expect(kinds(hint)).toEqual(['test-literal']);
    expect(kinds(hint, 'tool result: README says format prints three-point-zero')).toEqual([]);
  });
});
