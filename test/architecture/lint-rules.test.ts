/**
 * Proves that the rules of eslint.config.js that keep tests honest and imports clean fire: source text is linted
 * through ESLint's Node API with the project's own config, under a made-up path in test/ or lib/ (nothing is
 * written to the repository), and each offence must be reported by its rule, while clean text reports nothing.
 */
import { resolve } from 'node:path';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

const REPO = resolve(import.meta.dirname, '../..');
/** Made-up paths: the config picks rules by path, so a test file gets the vitest rules and a lib file does not. */
const TEST_FILE = resolve(REPO, 'test/architecture/made-up.test.ts');
const LIB_FILE = resolve(REPO, 'lib/made-up/made-up.ts');

const CLEAN_TEST = [
  "import { describe, expect, it } from 'vitest';",
  "import { join } from 'node:path';",
  '',
  "describe('join', () => {",
  "  it('joins', () => {",
  "    const [_first, second] = ['a', 'b'];",
  "    expect(join('a', second)).toBe('a/b');",
  '  });',
  '});',
  '',
].join('\n');

const OFFENCES: Array<{ name: string; file: string; text: string; rule: string }> = [
  {
    name: 'a skipped test',
    file: TEST_FILE,
    rule: 'vitest/no-disabled-tests',
    text: "import { expect, it } from 'vitest';\nit.skip('x', () => { expect(1).toBe(1); });\n",
  },
  {
    name: 'a skipped describe',
    file: TEST_FILE,
    rule: 'vitest/no-disabled-tests',
    text: "import { describe, expect, it } from 'vitest';\ndescribe.skip('d', () => { it('x', () => { expect(1).toBe(1); }); });\n",
  },
  {
    name: 'a focused test',
    file: TEST_FILE,
    rule: 'vitest/no-focused-tests',
    text: "import { expect, it } from 'vitest';\nit.only('x', () => { expect(1).toBe(1); });\n",
  },
  {
    name: 'a focused describe',
    file: TEST_FILE,
    rule: 'vitest/no-focused-tests',
    text: "import { describe, expect, it } from 'vitest';\ndescribe.only('d', () => { it('x', () => { expect(1).toBe(1); }); });\n",
  },
  {
    name: 'a test left as a todo',
    file: TEST_FILE,
    rule: 'vitest/warn-todo',
    text: "import { it } from 'vitest';\nit.todo('x');\n",
  },
  {
    name: 'a commented-out test',
    file: TEST_FILE,
    rule: 'vitest/no-commented-out-tests',
    text: "import { expect, it } from 'vitest';\n// it('x', () => { expect(1).toBe(2); });\nit('y', () => { expect(1).toBe(1); });\n",
  },
  {
    name: 'a test that asserts nothing',
    file: TEST_FILE,
    rule: 'vitest/expect-expect',
    text: "import { it } from 'vitest';\nit('x', () => { Math.max(1, 2); });\n",
  },
  {
    name: 'an unused import in a test',
    file: TEST_FILE,
    rule: 'unused-imports/no-unused-imports',
    text: "import { expect, it } from 'vitest';\nimport { join } from 'node:path';\nit('x', () => { expect(1).toBe(1); });\n",
  },
  {
    name: 'an unused import in source',
    file: LIB_FILE,
    rule: 'unused-imports/no-unused-imports',
    text: "import { join } from 'node:path';\nexport const x = 1;\n",
  },
  {
    name: 'an unused variable',
    file: LIB_FILE,
    rule: 'unused-imports/no-unused-vars',
    text: 'export function f(): number {\n  const unused = 2;\n  return 1;\n}\n',
  },
];

describe('the lint rules (eslint.config.js)', () => {
  let eslint: ESLint;

  beforeAll(() => {
    eslint = new ESLint({ cwd: REPO });
  });

  async function rulesReported(text: string, filePath: string): Promise<string[]> {
    const [result] = await eslint.lintText(text, { filePath, warnIgnored: true });
    return (result?.messages ?? []).map((message) => message.ruleId ?? `fatal: ${message.message}`);
  }

  it('report nothing on a clean test file, `_`-prefixed unused names included', async () => {
    expect(await rulesReported(CLEAN_TEST, TEST_FILE)).toEqual([]);
  });

  it.each(OFFENCES)('report $name with $rule', async ({ text, file, rule }) => {
    expect(await rulesReported(text, file)).toEqual([rule]);
  });

  it('remove an unused import with --fix', async () => {
    const fixer = new ESLint({ cwd: REPO, fix: true });
    const [result] = await fixer.lintText("import { join } from 'node:path';\nexport const x = 1;\n", { filePath: LIB_FILE });
    expect(result?.output).toBe('export const x = 1;\n');
  });
});
