import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { forgeRepository, type ForgeRunResult } from '../../lib/forge/forge-repository.ts';
import { exportSuite } from '../../lib/forge/forge-records.ts';
import { forgeTestRunner } from '../../lib/forge/forge-test-runner.ts';
import { parseForgeSpec } from '../../lib/forge/schemas.ts';
import { loadSuite } from '../../lib/harness/eval/load-suite.ts';
import { gradeAttempt } from '../../lib/harness/grading/grade-attempt.ts';
import { findForgeCandidates } from '../../lib/forge/find-forge-candidates.ts';
import { NamespaceSandboxProvider } from '../../lib/harness/sandbox/namespace-sandbox.ts';
import { candidate, pythonRepoFiles, writeRepo } from './support/forge-fixtures.ts';

/**
 * The real namespace sandbox, as in the TypeScript test: pytest lives under /root/.pyenv, which the sandbox hides with
 * the rest of /root but exposes read-only as an interpreter prefix.
 */
describe('forge on a Python repository (pytest, JUnit XML, namespace sandbox)', () => {
  let repo: string;
  let data: string;
  let ports: LocalPorts;
  let result: ForgeRunResult;
  let provider: NamespaceSandboxProvider;
  const files = pythonRepoFiles({ stalePyc: true });

  beforeAll(async () => {
    // Plain files, no git: the forge imports them into its own repository.
    repo = await writeRepo(files, { git: false });
    data = await mkdtemp(join(tmpdir(), 'fw-forge-py-'));
    ports = openLocalPorts(join(data, '.flywheel'));
    provider = new NamespaceSandboxProvider({ root: join(data, 'sandbox') });
    const spec = parseForgeSpec({ name: 'shop', repo: { kind: 'local', path: repo }, testCommand: 'python -m pytest -q tests', runner: { kind: 'pytest' }, suite: 'shop', k: 2, maxTasks: 3 });
    result = await forgeRepository({
      spec,
      provider,
      ports,
      runId: 'py-run',
      // The candidates module's own deletions (Python parsed by Python's ast), three of them picked by symbol.
      candidates: async (work, spec) => {
        const all = await findForgeCandidates(work, spec);
        const pick = (strategy: string, symbol: string) => all.find((c) => c.strategy === strategy && c.symbols[0] === symbol)!;
        // And a deletion that breaks the import of the package, so that no test module can even be collected.
        const breaksEverything = candidate({ id: 'cart-class-gone', strategy: 'class', symbols: ['shop/cart.py#Cart'], edits: [{ path: 'shop/cart.py', content: 'from shop.prices import discount\n' }], testFiles: ['tests/test_cart.py'] });
        return [pick('function-body', 'shop/prices.py#discount'), pick('function-body', 'shop/prices.py#unused_helper'), breaksEverything];
      },
    });
  }, 240_000);

  afterAll(async () => {
    ports?.close();
    await rm(data, { recursive: true, force: true });
    await rm(repo, { recursive: true, force: true });
  });

  it('reads per-test results from pytest JUnit reports in every baseline run', () => {
    expect(result.baseline.stable.sort()).toEqual([
      'tests/test_cart.py::test_cart_discount',
      'tests/test_cart.py::test_cart_total',
      'tests/test_prices.py::test_discount',
      'tests/test_prices.py::test_tax',
    ]);
    expect(result.baseline.flaky).toEqual([]);
  });

  it('certifies the function with tests, skips the untested one, rejects the deletion that breaks collection of everything', () => {
    // Keyed by candidate: the ranking, not this list, decides the order they are tried in.
    const verdicts = Object.fromEntries(result.candidates.map((c) => [`${c.strategy} ${c.symbols[0]}`, c.verdict]));
    expect(verdicts).toEqual({
      'function-body shop/prices.py#discount': 'certified',
      'function-body shop/prices.py#unused_helper': 'skipped:no-test-fails',
      'class shop/cart.py#Cart': 'rejected:collection-crash',
    });
    const crash = result.candidates.find((c) => c.strategy === 'class')!;
    expect(crash.detail).toMatch(/ImportError|cannot import name 'Cart'/);
    const task = result.tasks[0]!.task!;
    expect(task.failToPass.sort()).toEqual(['tests/test_cart.py::test_cart_discount', 'tests/test_cart.py::test_cart_total', 'tests/test_prices.py::test_discount']);
    expect(task.passToPass).toEqual(['tests/test_prices.py::test_tax']);
    expect(result.counts).toEqual({ certified: 1, 'skipped:no-test-fails': 1, 'rejected:collection-crash': 1 });
  });

  it('strips the stale .pyc holding the deleted function from the task tree, and records it', async () => {
    await exportOnce();
    const id = result.tasks[0]!.taskId;
    const taskRepo = join(data, 'repos', id);
    expect(existsSync(join(taskRepo, 'shop/__pycache__/prices.cpython-312.pyc'))).toBe(false);
    expect(execFileSync('git', ['cat-file', '--batch-all-objects', '--batch'], { cwd: taskRepo }).toString()).not.toContain('reduced = price * (100 - percent) / 100');
    expect((result.tasks[0]!.task!.metadata.forge as { leftovers: string[] }).leftovers).toEqual(['shop/__pycache__/prices.cpython-312.pyc']);
  });

  it('grades the exported task through the harness: the reference patch passes, the untouched tree fails', async () => {
    const tasks = await loadSuite(await exportOnce());
    expect(tasks).toHaveLength(1);
    const { task, sourceDir } = tasks[0]!;
    const runTests = forgeTestRunner(provider);
    const gold = await gradeAttempt({ task, sourceDir, diff: task.goldPatch!, attemptId: 'py-gold', runTests });
    expect(gold.reasons).toEqual([]);
    expect(gold.passed).toBe(true);
    const nothing = await gradeAttempt({ task, sourceDir, diff: '', attemptId: 'py-none', runTests });
    expect(nothing.passed).toBe(false);
    expect(nothing.perTest['tests/test_prices.py::test_discount']).toBe('failed');
  }, 60_000);

  let exported: string | undefined;
  async function exportOnce(): Promise<string> {
    if (!exported) {
      exported = join(data, 'suite');
      await exportSuite(ports, { suite: 'shop', dir: exported, reposDir: join(data, 'repos') });
    }
    return exported;
  }
});
