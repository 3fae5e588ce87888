import { rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gradeAttempt } from '../../../lib/harness/grading/grade-attempt.ts';
import { sandboxTestRunner } from '../../../lib/harness/grading/sandbox-test-runner.ts';
import type { SandboxProvider } from '../../../lib/harness/sandbox/sandbox.ts';
import { openPlainDirSandbox } from '../../support/plain-dir-sandbox.ts';
import { agentDiff, CALC_FIXED, calcTask, makeRepo, PY_FILES } from './grading-repos.ts';

const here = dirname(fileURLToPath(import.meta.url));
const vitestBin = resolve(here, '../../../node_modules/vitest/vitest.mjs');

const JS_FILES = {
  'package.json': '{ "name": "calc", "type": "module", "private": true }\n',
  'src/calc.js': 'export function add(a, b) {\n  return a - b;\n}\n',
  'src/calc.test.js': `import { add } from './calc.js';

describe('add', () => {
  it('adds two numbers', () => {
    expect(add(2, 3)).toBe(5);
  });
  it('adds zero', () => {
    expect(add(7, 0)).toBe(7);
  });
});
`,
};

describe('gradeAttempt with vitest (JSON report written to FLYWHEEL_REPORT_DIR)', () => {
  let repo: { dir: string; base: string };
  beforeAll(async () => {
    repo = await makeRepo(JS_FILES);
  });
  afterAll(async () => {
    await rm(repo.dir, { recursive: true, force: true });
  });

  const task = () =>
    calcTask({
      testCommand: `"${process.execPath}" "${vitestBin}" run --globals --reporter=json --outputFile="$FLYWHEEL_REPORT_DIR/vitest.json"`,
      failToPass: ['src/calc.test.js > add > adds two numbers'],
      passToPass: ['src/calc.test.js > add > adds zero'],
      testFiles: ['src/calc.test.js'],
    });

  it('passes a correct fix and fails a missing one, by the ids in the vitest report', async () => {
    const fix = await agentDiff(repo.dir, repo.base, { 'src/calc.js': 'export function add(a, b) {\n  return a + b;\n}\n' });
    const good = await gradeAttempt({ task: task(), sourceDir: repo.dir, baseCommit: repo.base, diff: fix, attemptId: 'js-fix' });
    expect(good.reportFormats).toEqual(['jest-json']);
    expect(good.perTest).toEqual({ 'src/calc.test.js > add > adds two numbers': 'passed', 'src/calc.test.js > add > adds zero': 'passed' });
    expect(good.passed).toBe(true);

    const none = await gradeAttempt({ task: task(), sourceDir: repo.dir, baseCommit: repo.base, diff: '', attemptId: 'js-none' });
    expect(none.perTest['src/calc.test.js > add > adds two numbers']).toBe('failed');
    expect(none.passed).toBe(false);
  });

  it('removes a vitest.config.js that excludes the failing test, and flags it', async () => {
    const diff = await agentDiff(repo.dir, repo.base, {
      'vitest.config.js': "export default { test: { exclude: ['**/calc.test.js'], passWithNoTests: true } };\n",
    });
    const result = await gradeAttempt({ task: task(), sourceDir: repo.dir, baseCommit: repo.base, diff, attemptId: 'js-config' });
    expect(result.reverted).toEqual([{ path: 'vitest.config.js', kind: 'runner-config', action: 'removed' }]);
    expect(result.perTest['src/calc.test.js > add > adds two numbers']).toBe('failed');
    expect(result.passed).toBe(false);
    expect(result.integrity.map((f) => f.kind)).toEqual(['runner-config-edit']);
  });
});

describe('gradeAttempt through sandboxTestRunner', () => {
  it('runs the tests in the sandbox copy and reads the reports back through the session', async () => {
    const repo = await makeRepo(PY_FILES);
    const opened: string[] = [];
    // Test-only provider over a plain temp copy (no isolation); the real one is NamespaceSandboxProvider.
    const provider: SandboxProvider = {
      async open(spec) {
        const session = await openPlainDirSandbox({ fromDir: spec.sourceDir, outputBytes: spec.limits.outputBytes });
        opened.push(session.workdir);
        return session;
      },
    };
    try {
      const diff = await agentDiff(repo.dir, repo.base, { 'calc/__init__.py': CALC_FIXED });
      const result = await gradeAttempt({ task: calcTask(), sourceDir: repo.dir, baseCommit: repo.base, diff, attemptId: 'sbx', runTests: sandboxTestRunner(provider) });
      expect(opened).toHaveLength(1);
      // Outcomes from the result stream, checked against the JUnit file read back through the session.
      expect(result.reportFormats).toEqual(['pytest-stream']);
      expect(result.integrityFailed).toBeUndefined();
      expect(result.passed).toBe(true);
      expect(result.collected).toBe(4);
    } finally {
      await rm(repo.dir, { recursive: true, force: true });
    }
  });
});
