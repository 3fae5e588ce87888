import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { findForgeCandidates } from '../../lib/forge/find-forge-candidates.ts';
import { putForgeRun, recordCandidate } from '../../lib/forge/forge-records.ts';
import { planForge, type ForgePlan } from '../../lib/forge/plan/plan-forge.ts';
import { failingShareBucket, forgeReport } from '../../lib/forge/report/forge-report.ts';
import { parseForgeSpec, type CandidateRecordBody } from '../../lib/forge/schemas.ts';
import { NamespaceSandboxProvider } from '../../lib/harness/sandbox/namespace-sandbox.ts';
import { pythonRepoFiles, writeRepo } from './support/forge-fixtures.ts';

const node = process.execPath;

function cli(args: string[]) {
  const r = spawnSync(node, ['bin/flywheel.ts', ...args], { cwd: process.cwd(), encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A candidate record as a forge run writes it. */
function rec(id: string, over: Partial<CandidateRecordBody>): CandidateRecordBody {
  return { kind: 'forge-candidate', runId: 'report-run', candidateId: id, strategy: 'function-body', files: ['src/pkg/a.py'], symbols: [`src/pkg/a.py#${id}`], status: 'certified', verdict: 'certified', durationMs: 60_000, at: '2026-12-04T10:00:00.000Z', ...over };
}

const rank = (isPublic: boolean) => ({ position: 0, score: 12, isPublic, removedLines: 6, difficulty: 0.4 });

/** Ten records: 4 certified, 4 tried and not, 2 refused by the ranking before a run. */
const RECORDS: CandidateRecordBody[] = [
  rec('parse', { entryPoint: 'src/pkg/core.py#parse', files: ['src/pkg/core.py'], rank: rank(true), failingShare: 0.02, taskId: 't1' }),
  rec('format', { entryPoint: 'src/pkg/core.py#format', files: ['src/pkg/core.py'], rank: rank(true), failingShare: 0.07, taskId: 't2' }),
  rec('_scan', { entryPoint: 'src/pkg/lexer.py#_scan', files: ['src/pkg/lexer.py'], strategy: 'function-group', rank: rank(false), failingShare: 0.15, taskId: 't3' }),
  rec('Term', { entryPoint: 'src/util/term.py#Term', files: ['src/util/term.py'], strategy: 'class', rank: rank(true), failingShare: 0.04, taskId: 't4' }),
  rec('main', { entryPoint: 'src/pkg/cli.py#main', files: ['src/pkg/cli.py'], rank: rank(true), status: 'rejected', verdict: 'rejected:breaks-suite', reason: 'breaks-suite', failingShare: 0.6 }),
  rec('echo', { entryPoint: 'src/pkg/cli.py#echo', files: ['src/pkg/cli.py'], rank: rank(true), status: 'skipped', verdict: 'skipped:no-test-fails', reason: 'no-test-fails', failingShare: 0 }),
  rec('wrap', { entryPoint: 'src/util/term.py#wrap', files: ['src/util/term.py'], rank: rank(true), status: 'duplicate', verdict: 'duplicate:t4', reason: 'duplicate', failingShare: 0.04 }),
  rec('_init', { entryPoint: 'src/pkg/core.py#_init', files: ['src/pkg/core.py'], rank: rank(false), status: 'skipped', verdict: 'skipped:not-exercised', reason: 'not-exercised', durationMs: 0 }),
  rec('with_http', { status: 'rejected', verdict: 'rejected:one-liner', reason: 'one-liner', detail: 'removes 1 statement(s)', durationMs: 0 }),
  rec('with_https', { status: 'rejected', verdict: 'rejected:near-duplicate', reason: 'near-duplicate', detail: 'same body as src/pkg/a.py#with_http', durationMs: 0 }),
];

describe('forge report: the spread of a run, from its candidate records', () => {
  let data: string;
  beforeAll(async () => {
    data = await mkdtemp(join(tmpdir(), 'fw-forge-report-'));
    const ports = openLocalPorts(data);
    try {
      await putForgeRun(ports.records, { runId: 'report-run', suite: 'r', origin: 'local', sourceCommit: 'abc', status: 'finished', startedAt: '2026-12-04T10:00:00.000Z', finishedAt: '2026-12-04T10:08:00.000Z' });
      for (const r of RECORDS) await recordCandidate(ports.records, r);
    } finally {
      ports.close();
    }
  });
  afterAll(async () => {
    await rm(data, { recursive: true, force: true });
  });

  it('counts candidates, refusals, tried and certified; reasons; certified tasks per hour of certification', async () => {
    const ports = openLocalPorts(data);
    try {
      const report = await forgeReport(ports.records, 'report-run');
      expect(report).toMatchObject({ runId: 'report-run', candidates: 10, refused: 2, tried: 8, certified: 4, certifiedShare: 0.5 });
      // 7 tried candidates of one minute each (the not-exercised one took none): 4 certified in 7 minutes.
      expect(report.hours).toBeCloseTo(7 / 60, 6);
      expect(report.tasksPerHour).toBeCloseTo(4 / (7 / 60), 6);
      expect(report.reasons).toEqual([
        { verdict: 'certified', count: 4 },
        { verdict: 'duplicate', count: 1 },
        { verdict: 'rejected:breaks-suite', count: 1 },
        { verdict: 'rejected:near-duplicate', count: 1 },
        { verdict: 'rejected:one-liner', count: 1 },
        { verdict: 'skipped:no-test-fails', count: 1 },
        { verdict: 'skipped:not-exercised', count: 1 },
      ]);
    } finally {
      ports.close();
    }
  });

  it('spreads per file (by entry point), directory, strategy, public vs private, and the failing-share histogram', async () => {
    const ports = openLocalPorts(data);
    try {
      const { spread } = await forgeReport(ports.records, 'report-run');
      expect(spread.byFile).toEqual([
        { key: 'src/pkg/core.py', tried: 3, certified: 2 },
        { key: 'src/util/term.py', tried: 2, certified: 1 },
        { key: 'src/pkg/lexer.py', tried: 1, certified: 1 },
        { key: 'src/pkg/cli.py', tried: 2, certified: 0 },
      ]);
      expect(spread.byDirectory).toEqual([
        { key: 'src/pkg', tried: 6, certified: 3 },
        { key: 'src/util', tried: 2, certified: 1 },
      ]);
      expect(spread.byStrategy).toEqual([
        { key: 'function-body', tried: 6, certified: 2 },
        { key: 'class', tried: 1, certified: 1 },
        { key: 'function-group', tried: 1, certified: 1 },
      ]);
      expect(spread.byVisibility).toEqual([
        { key: 'public', tried: 6, certified: 3 },
        { key: 'private', tried: 2, certified: 1 },
      ]);
      expect(spread.failingShare).toEqual([
        { key: '0-5%', tried: 4, certified: 2 },
        { key: '5-10%', tried: 1, certified: 1 },
        { key: '10-20%', tried: 1, certified: 1 },
        { key: '20-35%', tried: 0, certified: 0 },
        { key: '>35%', tried: 1, certified: 0 },
      ]);
      expect(spread.failingShareUnmeasured).toBe(1);
      expect([0, 0.049, 0.05, 0.35, 1].map(failingShareBucket)).toEqual(['0-5%', '0-5%', '5-10%', '>35%', '>35%']);
    } finally {
      ports.close();
    }
  });

  it('`flywheel forge report` prints the tables for the latest run, and the same report as JSON', () => {
    const text = cli(['forge', 'report', '--data-dir', data]);
    expect(text.stderr).toBe('');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/run report-run: 10 candidate\(s\), 2 refused before a run, 8 tried, 4 certified \(50% of tried\); 34\.3 tasks\/h/);
    expect(text.stdout).toMatch(/^src\/pkg\/core\.py\s+3\s+2\s+67%$/m);
    expect(text.stdout).toMatch(/^function-group\s+1\s+1\s+100%$/m);
    expect(text.stdout).toMatch(/^>35%\s+1\s+0\s+#$/m);
    const json = cli(['forge', 'report', '--run', 'report-run', '--json', '--data-dir', data]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ runId: 'report-run', tried: 8, certified: 4, spread: { byVisibility: [{ key: 'public' }, { key: 'private' }] } });
  }, 60_000);

  it('`flywheel forge report` on a data folder without runs says so and fails', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'fw-forge-report-empty-'));
    try {
      const r = cli(['forge', 'report', '--data-dir', empty]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/no forge run recorded/);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  }, 60_000);
});

/**
 * The dry run on a small pytest repository through the real namespace sandbox: one baseline run, the candidates module's
 * candidates ranked, nothing certified.
 */
describe('forge plan: a dry run in seconds', () => {
  let repo: string;
  let data: string;
  let plan: ForgePlan;

  beforeAll(async () => {
    repo = await writeRepo(pythonRepoFiles(), { git: false });
    data = await mkdtemp(join(tmpdir(), 'fw-forge-plan-'));
    const spec = parseForgeSpec({ name: 'shop', repo: { kind: 'local', path: repo }, testCommand: 'python -m pytest -q tests', runner: { kind: 'pytest' }, k: 3, maxTasks: 2 });
    plan = await planForge({ spec, provider: new NamespaceSandboxProvider({ root: join(data, 'sandbox') }), candidates: findForgeCandidates, show: 3 });
  }, 120_000);

  afterAll(async () => {
    await rm(data, { recursive: true, force: true });
    await rm(repo, { recursive: true, force: true });
  });

  it('runs the baseline once (k = 1 whatever the spec says) and reports its tests and collected test files', () => {
    expect(plan.baseline).toMatchObject({ tests: 4, stable: 4, flaky: 0, skipped: 0 });
    expect(plan.baseline.collectedFiles).toEqual(['tests/test_cart.py', 'tests/test_prices.py']);
    expect(plan.spec.testCommand).toContain('pytest');
    expect(plan.runner.kind).toBe('pytest');
    expect(plan.baseline.seconds).toBeGreaterThan(0);
    expect(plan.wallMs).toBeLessThan(60_000);
  });

  it('maps each source file to the collected test files that reach it', () => {
    expect(plan.testMap['shop/prices.py']).toContain('tests/test_prices.py');
    expect(plan.testMap['shop/cart.py']).toContain('tests/test_cart.py');
    for (const tests of Object.values(plan.testMap)) for (const t of tests) expect(plan.baseline.collectedFiles).toContain(t);
  });

  it('lists the first candidates in the order a run tries them, spread over files, with refusals counted', () => {
    expect(plan.candidates.found).toBeGreaterThan(plan.first.length);
    expect(plan.candidates.toTry + plan.candidates.refused).toBe(plan.candidates.found);
    expect(plan.candidates.limit).toBe(40);
    expect(Object.values(plan.candidates.refusedBy).reduce((a, b) => a + b, 0)).toBe(plan.candidates.refused);
    expect(plan.first).toHaveLength(3);
    expect(plan.first.map((c) => c.rank.position)).toEqual([0, 1, 2]);
    // The two source files with tests come first, one candidate each, before either gets a second.
    expect(new Set(plan.first.slice(0, 2).map((c) => c.files[0]))).toEqual(new Set(['shop/prices.py', 'shop/cart.py']));
    for (const c of plan.first) expect(c.relatedTests.length).toBeGreaterThan(0);
  });

  it('estimates the full run from the suite time: the k baseline runs plus every candidate through the oracle', () => {
    expect(plan.estimate.suiteSeconds).toBe(plan.baseline.seconds);
    expect(plan.estimate.suiteRuns).toBeGreaterThan(3 + plan.candidates.toTry);
    expect(plan.estimate.seconds).toBe(Math.round(plan.estimate.suiteRuns * plan.estimate.suiteSeconds));
    expect(plan.estimate.note).toMatch(/stops at 2 certified/);
  });

  it('`flywheel forge plan` prints the tables, or the plan as JSON', () => {
    const text = cli(['forge', 'plan', '--repo', repo, '--test-cmd', 'python -m pytest -q tests', '--runner', 'pytest', '--show', '2', '--data-dir', join(data, 'cli')]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^baseline \(1 run, [\d.]+ s\): 4 tests, 4 stable, 0 flaky, 0 skipped; 2 test file\(s\) collected$/m);
    expect(text.stdout).toMatch(/^shop\/prices\.py\s+.*tests\/test_prices\.py/m);
    expect(text.stdout).toMatch(/^1\s+shop\/\S+\s+\S+\s+\d+\s+(yes|no)\s/m);
    expect(text.stdout).toMatch(/^estimate: at most [\d.]+ min/m);
    const json = cli(['forge', 'plan', '--repo', repo, '--test-cmd', 'python -m pytest -q tests', '--runner', 'pytest', '--json', '--data-dir', join(data, 'cli')]);
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout) as ForgePlan;
    expect(parsed.baseline.tests).toBe(4);
    expect(parsed.first.length).toBeGreaterThan(0);
  }, 120_000);
});
