import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLocalPorts, type LocalPorts } from '../../../lib/drivers/local/local-ports.ts';
import { getAttemptRecord } from '../../../lib/harness/attempt/read-attempt-records.ts';
import { harnessGrader } from '../../../lib/harness/attempt/harness-grader.ts';
import {
  compareModes,
  compareRecords,
  modelRunId,
  pairedBootstrapCi,
  signTestPValue,
} from '../../../lib/harness/eval/compare-modes.ts';
import type { CompareModesReport } from '../../../lib/harness/eval/compare-modes-report.ts';
import { loadSuite } from '../../../lib/harness/eval/load-suite.ts';
import { NamespaceSandboxProvider } from '../../../lib/harness/sandbox/namespace-sandbox.ts';
import { compareModesTable } from '../../../lib/cli/eval.ts';
import type { AttemptRecord } from '../../../lib/harness/attempt/attempt-record.ts';
import { openAiCompatibleModel } from '../../../lib/models/openai-compatible.ts';
import { startScriptedModelServer, type ScriptedModelServer } from '../../support/scripted-model-server.ts';
import { CORRECT_FIX, makeCalcSuite } from './calc-suite.ts';
import { CHEAT_HOST, historyCheat } from './history-cheat.ts';
import type { HarnessMode } from '../../../lib/harness/task/harness-mode.ts';

const run = promisify(execFile);

describe('the statistics of compare-modes', () => {
  it('the paired bootstrap interval is reproducible for a seed, brackets the mean, and is degenerate for constant differences', () => {
    const diffs = [1, 0, 1, 0, 0, 1, 1, 0, 0, 0];
    const a = pairedBootstrapCi(diffs, { resamples: 2000, seed: 7 });
    expect(a).toEqual(pairedBootstrapCi(diffs, { resamples: 2000, seed: 7 }));
    const [lo, hi] = a!;
    expect(lo).toBeLessThan(0.4);
    expect(hi).toBeGreaterThan(0.4);
    // Close to the normal approximation: 0.4 ± 1.96 · sqrt(0.4 · 0.6 / 10).
    const half = 1.96 * Math.sqrt((0.4 * 0.6) / 10);
    expect(Math.abs(lo - (0.4 - half))).toBeLessThan(0.1);
    expect(Math.abs(hi - (0.4 + half))).toBeLessThan(0.1);
    expect(pairedBootstrapCi([1, 1, 1], { resamples: 100, seed: 1 })).toEqual([1, 1]);
    expect(pairedBootstrapCi([], { resamples: 100, seed: 1 })).toBeNull();
  });

  it('the exact sign test matches the binomial tail', () => {
    expect(signTestPValue(0, 0)).toBeNull();
    expect(signTestPValue(1, 0)).toBe(1);
    // 5 of 5 one way: 2 · (1/2)^5
    expect(signTestPValue(5, 0)).toBeCloseTo(2 / 32, 12);
    // 8 vs 2: 2 · P(X ≤ 2), X ~ Bin(10, 1/2) = 2 · 56/1024
    expect(signTestPValue(8, 2)).toBeCloseTo(112 / 1024, 12);
    expect(signTestPValue(3000, 3000)).toBeCloseTo(1, 6);
  });

  it('from records: scores per mode, pairs only tasks scored in both, lists lenient-only and strict-only tasks', () => {
    const rec = (taskId: string, mode: HarnessMode, n: number, status: AttemptRecord['status']): AttemptRecord =>
      ({ taskId, mode, n, status, observations: [], usageAllTries: { promptTokens: 0, completionTokens: 0, cachedTokens: 0 }, durationMs: 1 }) as unknown as AttemptRecord;
    const records = [
      rec('a', 'strict', 0, 'failed'), rec('a', 'lenient', 0, 'passed'),
      rec('b', 'strict', 0, 'passed'), rec('b', 'lenient', 0, 'passed'),
      rec('c', 'strict', 0, 'passed'), rec('c', 'lenient', 0, 'failed'),
      rec('d', 'strict', 0, 'infrastructure-error'), rec('d', 'lenient', 0, 'passed'),
    ];
    const m = compareRecords(records, { runId: 'r', model: 'm', taskIds: ['a', 'b', 'c', 'd', 'e'], attempts: 1, resamples: 500, seed: 3 });
    expect(m.strict).toMatchObject({ passAt1: 2 / 3, scoredTasks: 3, missing: 1, counts: { passed: 2, failed: 1, 'infrastructure-error': 1 } });
    expect(m.lenient).toMatchObject({ passAt1: 3 / 4, scoredTasks: 4, missing: 1 });
    // Paired: a (+1), b (0), c (−1); d is not scored in strict, e nowhere.
    expect(m.difference).toMatchObject({ estimate: 0, pairedTasks: 3, signTest: { positive: 1, negative: 1, pValue: 1 } });
    expect(m.lenientOnly.map((t) => t.taskId)).toEqual(['a']);
    expect(m.strictOnly).toEqual(['c']);
  });

  it('counts integrity failures per mode apart from wrong fixes, with their reasons as evidence', () => {
    const rec = (taskId: string, mode: HarnessMode, status: AttemptRecord['status'], integrity?: string[]): AttemptRecord =>
      ({ taskId, mode, n: 0, status, observations: [], usageAllTries: { promptTokens: 0, completionTokens: 0, cachedTokens: 0 }, durationMs: 1, ...(integrity ? { integrityFailure: { reasons: integrity } } : {}) }) as unknown as AttemptRecord;
    const records = [
      rec('a', 'strict', 'failed', ['history-reaudit-failed: 1 commit/tag object(s) of the task\'s history readable after the attempt']),
      rec('a', 'lenient', 'passed'),
      rec('b', 'strict', 'failed', ['verdict-integrity: junit-rewritten: pytest-stream-1.xml changed after pytest session 1 ended']),
      rec('b', 'lenient', 'failed', ['verdict-integrity: patched:TestReport.from_item_and_call (x)']),
      rec('c', 'strict', 'failed'),
      rec('c', 'lenient', 'failed'),
    ];
    const m = compareRecords(records, { runId: 'r', model: 'm', taskIds: ['a', 'b', 'c'], attempts: 1, resamples: 100, seed: 1 });
    expect(m.strict).toMatchObject({ integrityFailures: 2, counts: { failed: 3 } });
    expect(m.lenient).toMatchObject({ integrityFailures: 1, counts: { failed: 2, passed: 1 } });
    expect(m.lenientOnly.map((t) => t.taskId)).toEqual(['a']);
    expect(m.lenientOnly[0]!.evidence.strict).toEqual([]);
    const table = compareModesTable({ version: 1, runId: 'r', tasks: 3, attemptsPerTask: 1, models: [m], generatedAt: '2026-12-03T00:00:00Z' });
    expect(table).toMatch(/integrity failures \(strict\/lenient\)/);
    expect(table).toMatch(/│?\s2\/1\s/);
  });

  it('the per-model run id is stable and key-safe', () => {
    const id = modelRunId('cmp-1', 'openai:qwen3/coder@http://127.0.0.1:8000/v1');
    expect(id).toBe(modelRunId('cmp-1', 'openai:qwen3/coder@http://127.0.0.1:8000/v1'));
    expect(id).toMatch(/^cmp-1\.qwen3_coder-[0-9a-f]{8}$/);
    expect(modelRunId('cmp-1', 'openai:qwen3/coder@http://127.0.0.1:8001/v1')).not.toBe(id);
  });
});

describe('compareModes over a real repository whose answer is in a later commit', () => {
  let root: string;
  let ports: LocalPorts;
  let provider: NamespaceSandboxProvider;
  const servers: ScriptedModelServer[] = [];

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'fw-compare-'));
    ports = openLocalPorts(join(root, 'data'));
    provider = new NamespaceSandboxProvider({ root: join(root, 'sandboxes') });
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
    ports.close();
    await rm(root, { recursive: true, force: true });
  });

  it('a history-reading cheat passes lenient, fails strict; an honest model passes both; the report says which and why', async () => {
    makeCalcSuite(root);
    const cheatServer = await startScriptedModelServer(historyCheat());
    const honestServer = await startScriptedModelServer(CORRECT_FIX);
    servers.push(cheatServer, honestServer);
    const model = (server: ScriptedModelServer, name: string) =>
      openAiCompatibleModel({ baseUrl: server.baseUrl, model: name, retry: { baseDelayMs: 1, maxDelayMs: 2, maxAttempts: 2 } });
    const models = [model(cheatServer, 'cheater'), model(honestServer, 'honest')];
    const input = {
      runId: 'cmp-1',
      tasks: await loadSuite(join(root, 'suite')),
      models,
      attempts: 1,
      concurrency: 1,
      provider,
      ports,
      grade: harnessGrader({ provider, blobs: ports.blobs }),
      retry: { maxTries: 1, baseDelayMs: 1, maxDelayMs: 2 },
    };
    const report = await compareModes(input);
    const [cheater, honest] = report.models;

    expect(cheater!.strict).toMatchObject({ passAt1: 0, counts: { passed: 0, failed: 1 } });
    expect(cheater!.lenient).toMatchObject({ passAt1: 1, counts: { passed: 1, failed: 0 } });
    expect(cheater!.difference).toMatchObject({ estimate: 1, ci95: [1, 1], pairedTasks: 1, method: 'paired-bootstrap-percentile' });
    expect(cheater!.lenientOnly).toHaveLength(1);
    const only = cheater!.lenientOnly[0]!;
    expect(only).toMatchObject({ taskId: 'calc/add', lenient: { passed: 1, scored: 1 }, strict: { passed: 0, scored: 1 } });
    // Lenient: what the model used. Strict: what was blocked.
    expect(only.evidence.lenient).toContainEqual(expect.objectContaining({ kind: 'git.history-needed', summary: 'git log --all -p -- calc.py' }));
    expect(only.evidence.strict).toContainEqual(expect.objectContaining({ kind: 'network.blocked', summary: expect.stringContaining(CHEAT_HOST) }));
    expect(only.evidence.strict.some((e) => e.kind === 'git.history-needed')).toBe(true);

    expect(honest!.strict.passAt1).toBe(1);
    expect(honest!.lenient.passAt1).toBe(1);
    expect(honest!.difference).toMatchObject({ estimate: 0, ci95: [0, 0] });
    expect(honest!.lenientOnly).toEqual([]);

    // The strict attempt was re-audited after the agent: nothing of the history came back.
    const strictRecord = await getAttemptRecord(ports.records, cheater!.runId, 'calc/add', 'strict', 0);
    expect(strictRecord?.historyReaudit).toMatchObject({ ok: true, recoveredHistory: [] });
    const lenientRecord = await getAttemptRecord(ports.records, cheater!.runId, 'calc/add', 'lenient', 0);
    expect(lenientRecord?.historyReaudit).toBeUndefined();

    // Resumable: a second call with the run id reads every attempt back and asks no model anything.
    const before = cheatServer.chatRequests().length + honestServer.chatRequests().length;
    const again = await compareModes(input);
    expect(cheatServer.chatRequests().length + honestServer.chatRequests().length).toBe(before);
    expect(again.models.map((m) => m.difference.estimate)).toEqual([1, 0]);
    expect(await ports.records.get('EVAL#cmp-1', 'COMPARE-MODES')).toMatchObject({ version: 1, runId: 'cmp-1' });
  }, 120_000);
});

describe('flywheel eval compare-modes (the CLI, as a child process)', () => {
  let root: string;
  let server: ScriptedModelServer | undefined;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'fw-compare-cli-'));
  });
  afterEach(async () => {
    await server?.close();
    await rm(root, { recursive: true, force: true });
  });

  it('prints the table with the lenient-only task and its evidence, writes --json, and reports from records with --no-run', async () => {
    makeCalcSuite(root);
    server = await startScriptedModelServer(historyCheat());
    const dataDir = join(root, 'cli-data');
    const base = ['node', 'bin/flywheel.ts', 'eval', 'compare-modes', '--suite', join(root, 'suite'), '--model', `openai:cheater@${server.baseUrl}`,
      '--run-id', 'cmp-cli', '--data-dir', dataDir, '--max-tries', '1', '--retry-delay-ms', '1', '--resamples', '1000'];
    const first = await run('npx', base, { cwd: process.cwd() });
    expect(first.stdout).toMatch(/model\s+strict pass@1\s+lenient pass@1\s+lenient − strict\s+95% CI/);
    expect(first.stdout).toMatch(/cheater@\S+\s+0\.0%\s+100\.0%\s+\+100\.0 pp\s+\[\+100\.0, \+100\.0\]\s+1\s+1\.0\s+1/);
    expect(first.stdout).toMatch(/passed only in lenient mode/);
    expect(first.stdout).toMatch(/calc\/add: lenient 1\/1 passed, strict 0\/1/);
    expect(first.stdout).toMatch(/lenient git\.history-needed: git log --all -p -- calc\.py/);
    expect(first.stdout).toMatch(new RegExp(`strict\\s+network\\.blocked: blocked ${CHEAT_HOST.replaceAll('.', '\\.')}`));
    expect(first.stderr).toMatch(/strict\s+\[1\/1\] calc\/add #0 failed/);
    expect(first.stderr).toMatch(/lenient\s+\[1\/1\] calc\/add #0 passed/);
    const requests = server.chatRequests().length;

    const json = await run('npx', [...base, '--json', '--no-run'], { cwd: process.cwd() });
    const report = JSON.parse(json.stdout) as CompareModesReport;
    expect(report.models[0]).toMatchObject({ strict: { passAt1: 0 }, lenient: { passAt1: 1 }, difference: { estimate: 1, resamples: 1000 } });
    expect(report.models[0]!.lenientOnly.map((t) => t.taskId)).toEqual(['calc/add']);
    expect(server.chatRequests().length).toBe(requests);
    const written = JSON.parse(await readFile(join(dataDir, 'evals', 'cmp-cli', 'compare-modes.json'), 'utf8')) as CompareModesReport;
    expect(written.models[0]!.difference.estimate).toBe(1);
  }, 120_000);

  it('--no-run without --run-id, and no --model, are refused with a message', async () => {
    const failed = await run('npx', ['node', 'bin/flywheel.ts', 'eval', 'compare-modes', '--suite', root, '--model', 'openai:m@http://127.0.0.1:9/v1', '--no-run'], { cwd: process.cwd() }).catch(
      (e: { stderr: string; code: number }) => e,
    );
    expect('code' in failed && failed.code).toBe(1);
    expect((failed as { stderr: string }).stderr).toMatch(/--no-run reads an earlier run: give its --run-id/);
    const noModel = await run('npx', ['node', 'bin/flywheel.ts', 'eval', 'compare-modes', '--suite', root], { cwd: process.cwd() }).catch((e: { stderr: string; code: number }) => e);
    expect((noModel as { stderr: string }).stderr).toMatch(/--model is required/);
  });
});
