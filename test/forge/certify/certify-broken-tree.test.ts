/**
 * Certification's sharper checks on a real repository in the real namespace sandbox (node's test runner, JUnit):
 * the first pass runs only test files the runner collects, the broken tree runs `brokenRuns` times and a test that
 * passes in one of them is dropped and counted, and a deletion that fails most of a suite is refused `breaks-suite`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { certifyCandidate, type CertifyOutcome, type ForgeCandidate } from '../../../lib/forge/certify-candidate.ts';
import { prepareWorkRepo, type WorkRepo } from '../../../lib/forge/forge-git.ts';
import { runBaseline } from '../../../lib/forge/run-baseline.ts';
import { deriveFilterCommand } from '../../../lib/forge/runner/derive-filter.ts';
import { parseForgeSpec, SHARE_CAP_MIN_TESTS, type Baseline, type RunnableForgeSpec } from '../../../lib/forge/schemas.ts';
import { NamespaceSandboxProvider } from '../../../lib/harness/sandbox/namespace-sandbox.ts';
import { CALC_TS, CountingProvider, NODE_TEST_COMMAND, candidate, stubBody, writeRepo } from '../support/forge-fixtures.ts';
import { ADD_BODY, CORE_TS, FILES } from './certify-fixture.ts';

describe('certification on the broken tree (namespace sandbox, node test runner)', () => {
  let repo: string;
  let data: string;
  let provider: CountingProvider;
  let work: WorkRepo;
  let spec: RunnableForgeSpec;
  let baseline: Baseline;
  let taskCount = 0;

  /** Certifies one candidate; `passInRerun` makes the flaky test pass in the first rerun of the broken tree. */
  async function certify(c: ForgeCandidate, options: { passInRerun?: boolean } = {}): Promise<CertifyOutcome> {
    // certifyCandidate opens session N (probes, first pass, full run), then N+1, N+2 for the reruns.
    const env: Record<string, string> = options.passInRerun ? { PASS_IN_SESSION: String(provider.sessions + 1) } : {};
    const id = `task-${++taskCount}`;
    return certifyCandidate({ provider, work, spec: { ...spec, env: { ...spec.env, ...env } }, baseline, candidate: c, runId: 'certify-test', taskId: id, scratchDir: join(data, 'tasks', id) });
  }

  beforeAll(async () => {
    repo = await writeRepo(FILES);
    data = await mkdtemp(join(tmpdir(), 'fw-forge-certify-'));
    provider = new CountingProvider(new NamespaceSandboxProvider({ root: join(data, 'sandbox') }));
    spec = parseForgeSpec({ name: 'calc', repo: { kind: 'local', path: repo }, testCommand: NODE_TEST_COMMAND, runner: { kind: 'node-test', filterCommand: deriveFilterCommand(NODE_TEST_COMMAND, 'node-test')! }, k: 2 }) as RunnableForgeSpec;
    work = await prepareWorkRepo(spec.repo, join(data, 'work'));
    baseline = await runBaseline({ provider, sourceDir: work.dir, commit: work.baseCommit, spec });
  }, 120_000);

  afterAll(async () => {
    await rm(data, { recursive: true, force: true });
    await rm(repo, { recursive: true, force: true });
  });

  it('has a baseline of at least SHARE_CAP_MIN_TESTS stable tests whose collected files are the runner’s test files', () => {
    expect(baseline.stable.length).toBe(23);
    expect(baseline.stable.length).toBeGreaterThanOrEqual(SHARE_CAP_MIN_TESTS);
    expect(baseline.flaky).toEqual([]);
    expect(baseline.collectedFiles).toEqual(['test/calc.test.ts', 'test/core.test.ts']);
  });

  it('runs the first pass over collected test files only, and skips without a run when none is left', async () => {
    const sessionsBefore = provider.sessions;
    const helperOnly = await certify(candidate({ id: 'add-helper-only', symbols: ['add'], edits: [{ path: 'src/calc.ts', content: stubBody(CALC_TS, ...ADD_BODY) }], testFiles: ['test/helpers.ts'] }));
    expect(helperOnly).toMatchObject({ status: 'skipped', reason: 'not-exercised' });
    expect(helperOnly.status === 'skipped' && helperOnly.detail).toMatch(/test\/helpers\.ts/);
    expect(provider.sessions).toBe(sessionsBefore);

    const outcome = await certify(candidate({ id: 'add-body', symbols: ['add'], edits: [{ path: 'src/calc.ts', content: stubBody(CALC_TS, ...ADD_BODY) }], testFiles: ['test/calc.test.ts', 'test/helpers.ts'] }));
    expect(outcome.status).toBe('certified');
    const log = outcome.status === 'certified' ? outcome.artifacts.log : '';
    const firstPass = log.split('\n').find((l, i, all) => all[i - 1]?.startsWith('# first pass') && l.startsWith('command: '));
    expect(firstPass).toMatch(/'test\/calc\.test\.ts'$/);
    expect(firstPass).not.toContain('helpers');
  }, 120_000);

  it('keeps as fail-to-pass only tests failing in every broken-tree run; a test passing in one rerun is dropped and counted', async () => {
    const outcome = await certify(candidate({ id: 'add-body-flaky', symbols: ['add'], edits: [{ path: 'src/calc.ts', content: stubBody(CALC_TS, ...ADD_BODY) }], testFiles: ['test/calc.test.ts'] }), { passInRerun: true });
    expect(outcome.status).toBe('certified');
    if (outcome.status !== 'certified') return;
    expect(outcome.flakyDropped).toEqual(['test::add, or its fallback in one session']);
    expect(outcome.task.failToPass.sort()).toEqual(['test::add adds', 'test::multiply multiplies']);
    expect(outcome.task.passToPass).not.toContain('test::add, or its fallback in one session');
    expect(outcome.task.passToPass).toHaveLength(20);
    expect(outcome.failingShare).toBeCloseTo(3 / 23);
    expect((outcome.task.metadata.forge as { flakyDropped: string[] }).flakyDropped).toEqual(['test::add, or its fallback in one session']);
    // Two reruns, each of the failing tests' file only, in fresh sandboxes.
    expect(outcome.artifacts.log).toContain("# broken tree, run 2 of 3 (failing tests' files: test/calc.test.ts)");
    expect(outcome.artifacts.log).toContain("# broken tree, run 3 of 3 (failing tests' files: test/calc.test.ts)");
    expect(outcome.timings.rerunMs).toBeGreaterThan(0);
    // Each rerun logs its own exit line (what `npm run bench:forge` reports as the reruns' cost).
    expect([...outcome.artifacts.log.matchAll(/^# broken tree, run \d[\s\S]*?^exit: .*; (\d+) ms$/gm)]).toHaveLength(2);
  }, 120_000);

  it('rejects only-flaky-tests-fail when every failing test passes in some rerun', async () => {
    // Only the flaky test reaches add this way: the other two tests still pass (add returns the right sum for them).
    const partial = CALC_TS.replace('  const sum = a + b;\n  return sum;\n', "  if (a === 20) throw new Error('not implemented');\n  const sum = a + b;\n  return sum;\n");
    const outcome = await certify(candidate({ id: 'add-partial', symbols: ['add'], edits: [{ path: 'src/calc.ts', content: partial }], testFiles: ['test/calc.test.ts'] }), { passInRerun: true });
    expect(outcome).toMatchObject({ status: 'rejected', reason: 'only-flaky-tests-fail', flakyDropped: ['test::add, or its fallback in one session'] });
  }, 120_000);

  it('refuses a deletion failing more than maxFailingShare of the stable tests as breaks-suite, with the dominant error', async () => {
    const normalizeGone = stubBody(CORE_TS, 'export function normalize(x: number): number {\n', '  const size = Math.abs(x);\n  return size;\n');
    const sessionsBefore = provider.sessions;
    const outcome = await certify(candidate({ id: 'normalize-body', symbols: ['normalize'], edits: [{ path: 'src/core.ts', content: normalizeGone }], testFiles: ['test/core.test.ts'] }));
    expect(outcome).toMatchObject({ status: 'rejected', reason: 'breaks-suite' });
    if (outcome.status !== 'rejected') return;
    expect(outcome.failingShare).toBeCloseTo(20 / 23);
    expect(outcome.detail).toMatch(/^20 of 23 stable tests fail \(87\.0%, above the 35\.0% cap\) — 20 of them: .*not implemented/);
    // Refused after the full run: no rerun, no oracle.
    expect(provider.sessions).toBe(sessionsBefore + 1);
    expect(outcome.flakyDropped).toBeUndefined();
  }, 120_000);
});
