/**
 * The linter, run by `npm run lint` (and so by `npm test`): rules that keep tests honest (none skipped, focused,
 * commented out or left as a todo; every test asserts), no unused imports or variables, and the correctness rules of
 * the recommended sets. Syntax only, no type information, so the whole repository lints in seconds; `tsc --noEmit`
 * does the type checking. Proved to fire by test/architecture/lint-rules.test.ts.
 *
 * @example
 * npm run lint                                  # the whole repository
 * npx eslint --fix lib/feedback                 # also removes unused imports
 */
import js from '@eslint/js';
import vitest from '@vitest/eslint-plugin';
import unusedImports from 'eslint-plugin-unused-imports';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** Names, besides `expect`, that count as an assertion for vitest/expect-expect. */
const ASSERTION_FUNCTIONS = [
  'assert*',
  'expect*',
  // aws-cdk-lib/assertions: template.hasResourceProperties(...), template.resourceCountIs(...)
  '*.has*',
  '*.resourceCountIs',
  '*.templateMatches',
];

export default defineConfig(
  { ignores: ['node_modules/', 'cdk.out/', '.flywheel/', 'data/', 'docs/', 'coverage/'] },
  {
    files: ['**/*.{ts,tsx,js,mjs,cjs}'],
    extends: [js.configs.recommended, tseslint.configs.recommended],
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    languageOptions: { globals: globals.node },
    plugins: { 'unused-imports': unusedImports },
    rules: {
      // unused-imports reports the same as no-unused-vars, but can --fix imports away.
      '@typescript-eslint/no-unused-vars': 'off',
      'unused-imports/no-unused-imports': 'error',
      'unused-imports/no-unused-vars': [
        'error',
        {
          args: 'after-used',
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      // `if (x) (a(), b())` and `c ? (a += 1) : (b += 1)` are statements in disguise, not forgotten values.
      '@typescript-eslint/no-unused-expressions': ['error', { allowShortCircuit: true, allowTernary: true }],
      // Style or taste, not correctness; each would need dozens to hundreds of edits.
      '@typescript-eslint/no-explicit-any': 'off',
      'no-useless-escape': 'off',
      // Stripping ASCII control characters (\x00-\x1f) from user text is intended.
      'no-control-regex': 'off',
    },
  },
  // The console runs in a browser: its globals are the DOM's, not Node's.
  { files: ['lib/console/web/**/*.{ts,tsx}'], languageOptions: { globals: globals.browser } },
  {
    files: ['test/**/*.ts'],
    plugins: { vitest },
    rules: {
      ...vitest.configs.recommended.rules,
      // Keep tests honest: none skipped, focused, commented out or left as a todo.
      'vitest/no-disabled-tests': 'error',
      'vitest/no-focused-tests': 'error',
      'vitest/no-commented-out-tests': 'error',
      'vitest/warn-todo': 'error',
      'vitest/expect-expect': ['error', { assertFunctionNames: ASSERTION_FUNCTIONS }],
      // Vitest's expect takes a message as its second argument.
      'vitest/valid-expect': ['error', { maxArgs: 2 }],
      // Flags 15 deliberate platform or shape branches; rewriting them is out of this rule set's scope.
      'vitest/no-conditional-expect': 'off',
      // An expect in afterAll (a runtime that must stop cleanly) is intended.
      'vitest/no-standalone-expect': 'off',
    },
  },
);
