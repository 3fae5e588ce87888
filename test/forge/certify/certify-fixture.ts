/**
 * A repository for certification's checks (node's test runner): calc (add, multiply) with a test that is flaky only
 * on the broken tree, core (normalize) with 20 tests, and a helper under test/ that the runner never collects.
 */
import { CALC_TS } from '../support/forge-fixtures.ts';

export const CORE_TS = `/** The size of a number, whatever its sign. */
export function normalize(x: number): number {
  const size = Math.abs(x);
  return size;
}
`;

/** 20 tests of one function: deleting it fails most of the suite. */
const coreTests = `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalize } from '../src/core.ts';

${Array.from({ length: 20 }, (_, i) => `test('normalize keeps ${i}', () => {\n  assert.equal(normalize(-${i}), ${i});\n});`).join('\n')}
`;

export const FILES: Record<string, string> = {
  'package.json': '{ "name": "calc-certify", "type": "module", "private": true }\n',
  'src/calc.ts': CALC_TS,
  'src/core.ts': CORE_TS,
  'test/calc.test.ts': `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { add, multiply } from '../src/calc.ts';

test('add adds', () => {
  assert.equal(add(2, 3), 5);
});
test('multiply multiplies', () => {
  assert.equal(multiply(4, 3), 12);
});
// Without add, this test passes only in the session PASS_IN_SESSION names: flaky on the broken tree, stable on the intact one.
test('add, or its fallback in one session', () => {
  let sum: number;
  try {
    sum = add(20, 30);
  } catch {
    sum = process.env.FORGE_SESSION === process.env.PASS_IN_SESSION ? 50 : -1;
  }
  assert.equal(sum, 50);
});
`,
  'test/core.test.ts': coreTests,
  // Under test/ and importing the code, but no test file: the runner never collects it.
  'test/helpers.ts': `import { add } from '../src/calc.ts';\nexport const three = add(1, 2);\n`,
};

export const ADD_BODY = ['export function add(a: number, b: number): number {\n', '  const sum = a + b;\n  return sum;\n'] as const;
