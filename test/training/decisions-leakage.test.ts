/**
 * The leakage check with hints that leak each kind of secret (a hidden test's id and name, its string and number
 * literals, a line of the reference patch, a line of a file the agent never saw) and hints that do not (the tool
 * list, a person's comment, a secret the student had already seen).
 */
import { describe, expect, it } from 'vitest';
import { checkHintLeakage, LEAKAGE_CHECKER, secretsDigest, taskSecrets, testNameOf, testNameWords } from '../../lib/training/decisions/check-hint-leakage.ts';
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

describe('hints that leak in other words', () => {
  it('part of a reference patch line, in another case or spacing', () => {
    expect(checkHintLeakage('Change it to Number(a) + Number(b)', secrets, now).passed).toBe(false);
    expect(checkHintLeakage('change it to   NUMBER(a)  +\n Number(b)', secrets, now).passed).toBe(false);
    expect(checkHintLeakage('EXPORT CONST ADD = (A, B) => NUMBER(A) + NUMBER(B);', secrets, now).findings.map((f) => f.kind)).toEqual(['reference-patch-line']);
  });

  it('a hidden test name written as words, in camelCase, or with dashes', () => {
    expect(testNameWords('test_adds_negative_numbers')).toEqual(['adds', 'negative', 'numbers']);
    expect(testNameWords('testAddsNegativeNumbers')).toEqual(['adds', 'negative', 'numbers']);
    for (const hint of ['It fails adds negative numbers, I think.', 'See addsNegativeNumbers.', 'the Adds-Negative-Numbers case', 'ADDS  NEGATIVE\nNUMBERS']) expect(kinds(hint), hint).toContain('test-name');
    const camel = taskSecrets({ failToPass: ['tests/calc.test.ts > addsNegativeNumbers'] });
    expect(checkHintLeakage('the adds negative numbers test', camel, now).findings.map((f) => f.kind)).toEqual(['test-name']);
  });

  it('a number of the hidden tests by value, whatever its spelling', () => {
    for (const hint of ['try -40_000_000 and 2', 'try -40,000,000 and 2', 'try -4e7 and 2', 'expect -39999998.0']) expect(kinds(hint), hint).toEqual(['test-literal']);
    expect(kinds('try 40000000 and 2')).toEqual([]);
  });

  it('an identifier or literal the reference patch adds, and a long stretch shared with the hidden tests', () => {
    const task = { failToPass: ['tests/test_slug.py::test_unicode'], goldPatch: ['--- a/slug.py', '+++ b/slug.py', '@@ -1 +1 @@', '-    return s', '+    return unicodedata_normalize(s, "NFKD-compat-form")'].join('\n') };
    const s2 = taskSecrets(task);
    expect(checkHintLeakage('call unicodedata_normalize first', s2, now).findings.map((f) => f.kind)).toEqual(['reference-patch-token']);
    expect(checkHintLeakage('use the nfkd-compat-form form', s2, now).findings.map((f) => f.kind)).toEqual(['reference-patch-token']);
    expect(kinds('remember to call format(add(1, 2))).tobe and check it')).toEqual(['shared-secret-text']);
  });

  it('hidden tests given as files (no test patch): their names, literals and lines', () => {
    const harbor = taskSecrets({ failToPass: ['tests/test.sh'] }, { 'tests/test_outputs.py': 'def test_csv_has_header():\n    assert read("out.csv")[0] == "id,name,total_cents"\n' });
    expect(checkHintLeakage('the header must be id,name,total_cents', harbor, now).findings.map((f) => f.kind)).toEqual(['test-literal']);
    expect(checkHintLeakage('check that the csv has header', harbor, now).findings.map((f) => f.kind)).toEqual(['test-name']);
    expect(checkHintLeakage('Write the CSV the task asks for.', harbor, now).passed).toBe(true);
  });

  it('an added line that starts with ++ (a `+++` diff line) is a line of the patch, not a header', () => {
    const gold = ['diff --git a/c.c b/c.c', '--- a/c.c', '+++ b/c.c', '@@ -1,2 +1,2 @@', ' int f() {', '-  counter_total--;', '+++counter_total_overflow_guard;'].join('\n');
    const s3 = taskSecrets({ goldPatch: gold });
    expect(s3.patchLines).toEqual(['++counter_total_overflow_guard;']);
    expect(checkHintLeakage('add ++counter_total_overflow_guard; there', s3, now).passed).toBe(false);
  });

  it('the digest changes with the secrets, not with what the student saw', () => {
    expect(secretsDigest({ ...secrets, seen: 'anything' })).toBe(secretsDigest(secrets));
    expect(secretsDigest(taskSecrets({ ...TASK, failToPass: ['other_test_name'] }))).not.toBe(secretsDigest(secrets));
  });
});

describe('hints that do not leak', () => {
  it('the tool list, a person’s comment, the sandbox rules', () => {
    for (const hint of [
      'There is no tool named "run_tests". The tools that exist are:\n- bash: Run a shell command in the workspace.\n- read_file: Read a file of the workspace.',
      'Never delete tests; fix the code.',
      'The network is closed in this sandbox: pypi.org cannot be reached.',
      'add() must add numbers, also negative ones.',
      'The arguments of "read_file" must be a JSON object matching this schema: {"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}\nWhat was wrong: path: Required',
      'The repository has no history before its base commit here, so `git log -p` cannot see earlier commits. Read and change the files in the workspace instead.',
      '# Read the tests you can see first; never edit them.',
    ]) {
      const check = checkHintLeakage(hint, secrets, now);
      expect(check).toEqual({ passed: true, findings: [], checkedAt: '2026-12-03T12:00:00.000Z', checker: LEAKAGE_CHECKER, secretsDigest: secretsDigest(secrets) });
    }
  });

  it('a secret the student saw before the decision (its own tool output) is not a leak', () => {
    const hint = 'format should print three-point-zero';
    expect(kinds(hint)).toEqual(['test-literal']);
    expect(kinds(hint, 'tool result: README says format prints three-point-zero')).toEqual([]);
  });
});
