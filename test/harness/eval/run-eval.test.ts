import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLocalPorts, type LocalPorts } from '../../../lib/drivers/local/local-ports.ts';
import { listAttemptRecords } from '../../../lib/harness/attempt/read-attempt-records.ts';
import { harnessGrader } from '../../../lib/harness/attempt/harness-grader.ts';
import { loadSuite } from '../../../lib/harness/eval/load-suite.ts';
import { passAtK } from '../../../lib/harness/eval/pass-at-k.ts';
import { runEval, type EvalProgress, type RunEvalInput } from '../../../lib/harness/eval/run-eval.ts';
import { NamespaceSandboxProvider } from '../../../lib/harness/sandbox/namespace-sandbox.ts';
import { openAiCompatibleModel } from '../../../lib/models/openai-compatible.ts';
import { startScriptedModelServer, type Script, type ScriptedModelServer } from '../../support/scripted-model-server.ts';
import { CORRECT_FIX, fixScript, makeCalcSuite, WRONG_FIX } from './calc-suite.ts';

const run = promisify(execFile);

let root: string;
let ports: LocalPorts;
let provider: NamespaceSandboxProvider;
const servers: ScriptedModelServer[] = [];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'fw-eval-'));
  ports = openLocalPorts(join(root, 'data'));
  provider = new NamespaceSandboxProvider({ root: join(root, 'sandboxes') });
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  ports.close();
  await rm(root, { recursive: true, force: true });
});

async function serve(script: Script): Promise<ScriptedModelServer> {
  const server = await startScriptedModelServer(script);
  servers.push(server);
  return server;
}

async function evaluate(server: ScriptedModelServer, overrides: Partial<RunEvalInput> = {}) {
  const events: EvalProgress[] = [];
  const results = await runEval({
    runId: 'run-1',
    tasks: await loadSuite(join(root, 'suite')),
    mode: 'strict',
    attempts: 2,
    concurrency: 2,
    model: openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'scripted-coder', retry: { baseDelayMs: 1, maxDelayMs: 2, maxAttempts: 2 } }),
    provider,
    ports,
    grade: harnessGrader({ provider, blobs: ports.blobs }),
    retry: { maxTries: 2, baseDelayMs: 1, maxDelayMs: 2 },
    onProgress: (e) => events.push(e),
    ...overrides,
  });
  return { results, events };
}

describe('runEval over a real repository task, strict namespace sandbox', () => {
  it('a correct fix scores pass@1 = pass@k = 1; tokens and times are summed', async () => {
    makeCalcSuite(root);
    const { results, events } = await evaluate(await serve(CORRECT_FIX));
    expect(results.counts).toEqual({ passed: 2, failed: 0, ungraded: 0, 'infrastructure-error': 0 });
    expect(results.passAt1).toBe(1);
    expect(results.passAtK).toEqual({ k: 2, value: 1, tasks: 1 });
    expect(results.tokens).toEqual({ prompt: 2 * 360, completion: 2 * 35, cached: 0, total: 2 * 395 });
    expect(results.ran).toBe(2);
    expect(results.skipped).toBe(0);
    expect(events.filter((e) => e.type === 'finished').map((e) => e.type === 'finished' && e.done).sort()).toEqual([1, 2]);
    // The results are in the record store too.
    expect(await ports.records.get('EVAL#run-1', 'RESULTS#strict')).toMatchObject({ passAt1: 1, counts: { passed: 2 } });
  });

  it('a wrong fix fails: pass@1 = 0', async () => {
    makeCalcSuite(root);
    const { results } = await evaluate(await serve(WRONG_FIX));
    expect(results.counts).toEqual({ passed: 0, failed: 2, ungraded: 0, 'infrastructure-error': 0 });
    expect(results.passAt1).toBe(0);
    expect(results.passAtK.value).toBe(0);
  });

  it('mixed attempts give the unbiased estimate: 1 of 3 correct → pass@1 = 1/3', async () => {
    makeCalcSuite(root);
    // Attempts run one at a time; only the first edit is the correct one.
    const script = fixScript((edit) => (edit === 1 ? 'return a + b' : 'return b'));
    const { results } = await evaluate(await serve(script), { attempts: 3, concurrency: 1 });
    expect(results.counts).toMatchObject({ passed: 1, failed: 2 });
    expect(results.passAt1).toBeCloseTo(1 / 3, 12);
    expect(results.passAtK).toEqual({ k: 3, value: passAtK(3, 1, 3), tasks: 1 });
  });

  it('an endpoint that stays down is an infrastructure error, reported apart and never scored; a resume retries it', async () => {
    makeCalcSuite(root);
    const down = await serve(() => ({ error: { status: 503 } }));
    const first = await evaluate(down, { attempts: 1 });
    expect(first.results.counts).toEqual({ passed: 0, failed: 0, ungraded: 0, 'infrastructure-error': 1 });
    expect(first.results.passAt1).toBeNull();
    expect(first.results.perTask[0]).toMatchObject({ scored: 0, infrastructureErrors: 1 });
    expect(first.events.filter((e) => e.type === 'try-failed')).toHaveLength(2);

    // Same run id, endpoint back: the attempt runs again, its earlier tries kept in its history.
    const { results } = await evaluate(await serve(CORRECT_FIX), { attempts: 1 });
    expect(results.counts).toEqual({ passed: 1, failed: 0, ungraded: 0, 'infrastructure-error': 0 });
    expect(results.skipped).toBe(0);
    const [record] = await listAttemptRecords(ports.records, 'run-1');
    expect(record!.history.map((t) => [t.try, t.outcome])).toEqual([
      [1, 'infrastructure-error'],
      [2, 'infrastructure-error'],
      [3, 'completed'],
    ]);
  });

  it('resumes: a re-run with the same run id skips finished attempts and runs only the missing ones', async () => {
    makeCalcSuite(root);
    const firstServer = await serve(CORRECT_FIX);
    await evaluate(firstServer, { attempts: 2 });
    expect(firstServer.chatRequests()).toHaveLength(6);

    // As after a crash: two attempts are done, one (n = 2) is not. A model that would fail, were it asked.
    const second = await serve(WRONG_FIX);
    const { results, events } = await evaluate(second, { attempts: 3 });
    expect(results.skipped).toBe(2);
    expect(results.ran).toBe(1);
    expect(events.filter((e) => e.type === 'skipped').map((e) => e.type === 'skipped' && e.n).sort()).toEqual([0, 1]);
    expect(second.chatRequests()).toHaveLength(3);
    expect(results.counts).toMatchObject({ passed: 2, failed: 1 });
    expect(results.passAt1).toBeCloseTo(2 / 3, 12);
  });
});

describe('flywheel eval run (the CLI, as a child process)', () => {
  it('runs a suite, prints progress and a summary table, writes results JSON, and resumes by run id', async () => {
    makeCalcSuite(root);
    const server = await serve(CORRECT_FIX);
    const dataDir = join(root, 'cli-data');
    const args = ['node', 'bin/flywheel.ts', 'eval', 'run', '--suite', join(root, 'suite'), '--model', `openai:scripted-coder@${server.baseUrl}`,
      '--mode', 'strict', '--concurrency', '2', '--attempts', '2', '--run-id', 'cli-1', '--data-dir', dataDir];
    const first = await run('npx', args, { cwd: process.cwd() });
    expect(first.stderr).toMatch(/\[\d\/2\] calc\/add #[01] passed/);
    expect(first.stdout).toMatch(/task\s+scored\s+passed\s+infra errors\s+ungraded\s+pass@1\s+pass@2/);
    expect(first.stdout).toMatch(/all \(1 tasks\)\s+2\s+2\s+0\s+0\s+100\.0%\s+100\.0%/);
    const results = JSON.parse(await readFile(join(dataDir, 'evals', 'cli-1', 'results-strict.json'), 'utf8'));
    expect(results).toMatchObject({ runId: 'cli-1', passAt1: 1, passAtK: { k: 2, value: 1 }, counts: { passed: 2 } });
    expect(server.chatRequests()).toHaveLength(6);

    const again = await run('npx', args, { cwd: process.cwd() });
    expect(again.stderr).toMatch(/calc\/add #0 passed \(already finished, skipped\)/);
    expect(again.stdout).toMatch(/ran 0, skipped 2/);
    expect(server.chatRequests()).toHaveLength(6);
  }, 60_000);

  it('--jobs 2: the suite as a 2-child array job through the rollout entry point, the same table, resumable', async () => {
    makeCalcSuite(root);
    const server = await serve(CORRECT_FIX);
    const dataDir = join(root, 'jobs-data');
    const args = ['node', 'bin/flywheel.ts', 'eval', 'run', '--suite', join(root, 'suite'), '--model', `openai:scripted-coder@${server.baseUrl}`,
      '--attempts', '2', '--run-id', 'jobs-1', '--jobs', '2', '--data-dir', dataDir];
    const first = await run('npx', args, { cwd: process.cwd() });
    expect(first.stderr).toMatch(/as 2 job child\(ren\) on the jobs port/);
    expect(first.stderr).toMatch(/job \S+ SUCCEEDED/);
    expect(first.stdout).toMatch(/all \(1 tasks\)\s+2\s+2\s+0\s+0\s+100\.0%\s+100\.0%/);
    expect(first.stdout).toMatch(/ran 2, skipped 0/);
    const results = JSON.parse(await readFile(join(dataDir, 'evals', 'jobs-1', 'results-strict.json'), 'utf8'));
    expect(results).toMatchObject({ runId: 'jobs-1', passAt1: 1, passAtK: { k: 2, value: 1 }, counts: { passed: 2 } });
    // The attempts are the children's: the one task went to one child, the other child had none.
    const data = openLocalPorts(dataDir);
    try {
      const perShard = await Promise.all([0, 1].map((i) => listAttemptRecords(data.records, `jobs-1.shard-${i}`)));
      expect(perShard.map((r) => r.length).sort()).toEqual([0, 2]);
    } finally {
      data.close();
    }
    const listed = await run('npx', ['node', 'bin/flywheel.ts', 'jobs', 'list', '--data-dir', dataDir], { cwd: process.cwd() });
    expect(listed.stdout).toMatch(/eval-jobs-1\s+rollout\s+evaluation\s+gpu\s+SUCCEEDED\s+2: succeeded 2/);
    expect(server.chatRequests()).toHaveLength(6);

    // Again: a new job whose children find every attempt finished.
    const again = await run('npx', args, { cwd: process.cwd() });
    expect(again.stdout).toMatch(/ran 0, skipped 2/);
    expect(server.chatRequests()).toHaveLength(6);
    // Another shard count under the same run id would deal the task to another child: refused, naming it.
    const reshard = await run('npx', args.map((a, i) => (args[i - 1] === '--jobs' ? '3' : a)), { cwd: process.cwd() }).catch((e: { stderr: string; code: number }) => e);
    expect((reshard as { code: number }).code).toBe(1);
    expect((reshard as { stderr: string }).stderr).toMatch(/run jobs-1 was started with other shardCount \(shardCount 2\)/);
    const noFolder = await run('npx', [...args.slice(0, 5), 'no-such-suite', ...args.slice(6)], { cwd: process.cwd() }).catch((e: { stderr: string; code: number }) => e);
    expect((noFolder as { code: number }).code).toBe(1);
  }, 120_000);

  it('rejects a bad mode with a message', async () => {
    await writeFile(join(root, 'x.json'), '{}');
    const failed = await run('npx', ['node', 'bin/flywheel.ts', 'eval', 'run', '--suite', root, '--model', 'openai:m@http://127.0.0.1:9/v1', '--mode', 'loose'], { cwd: process.cwd() }).catch((e: { stderr: string; code: number }) => e);
    expect('code' in failed && failed.code).toBe(1);
    expect((failed as { stderr: string }).stderr).toMatch(/--mode must be strict or lenient/);
  });
});
