/**
 * The rollout entry point run as it runs in the image — a plain process — over a tiny real git task (the calc
 * fixture) in the strict namespace sandbox, with a scripted OpenAI-protocol model:
 * - the local jobs driver submits a 2-child array job; each child takes its shard by AWS_BATCH_JOB_ARRAY_INDEX,
 *   runs its attempt and writes its shard result (blob and record);
 * - with FLYWHEEL_VLLM_COMMAND a stand-in vLLM (test/support/fake-vllm.ts) is started, waited for, used and stopped;
 * - exit codes: bad input 3, infrastructure 1.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ROLLOUT_EXIT_CODES } from '../../lib/rollout/rollout-exit-codes.ts';
import type { ShardResult } from '../../lib/rollout/run-rollout-shard.ts';
import type { ShardSpecInput } from '../../lib/rollout/shard-spec.ts';
import { waitForJob } from '../../lib/compute/wait-for-job.ts';
import { LocalJobs } from '../../lib/drivers/local/local-jobs.ts';
import { REPOSITORY_ROOT } from '../../lib/drivers/local/jobs/job-definitions.ts';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { freePort } from '../support/free-port.ts';
import { gitSync } from '../support/git-fixture.ts';
import { startScriptedModelServer, type ScriptedModelServer } from '../support/scripted-model-server.ts';
import { fixScript, makeCalcSuite } from '../harness/eval/calc-suite.ts';

const ENTRYPOINT = join(REPOSITORY_ROOT, 'batch-images/rollout/entrypoint.ts');

let root: string;
let dataDir: string;
let ports: LocalPorts;
let server: ScriptedModelServer | undefined;
let jobs: LocalJobs | undefined;
let repoDir: string;

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), 'fw-rollout-'));
  dataDir = join(root, 'data');
  ports = openLocalPorts(dataDir);
  const calc = makeCalcSuite(root);
  repoDir = calc.repoDir;
  // Two tasks over the one repository, stored as blobs with an absolute repository path.
  for (const id of ['calc/add', 'calc/add-again']) {
    await ports.blobs.put(`suites/calc/tasks/${id.split('/')[1]}.json`, JSON.stringify({ ...calc.task, id, repo: { kind: 'git', url: calc.repoDir, commit: calc.base } }));
  }
});
afterEach(async () => {
  await jobs?.close();
  jobs = undefined;
  await server?.close();
  server = undefined;
  ports.close();
  rmSync(root, { recursive: true, force: true });
});

const TASK_KEYS = ['suites/calc/tasks/add.json', 'suites/calc/tasks/add-again.json'];

function spec(extra: Partial<ShardSpecInput> = {}): ShardSpecInput {
  return { schemaVersion: 1, runId: 'sweep-t.ckpt-1.calc.strict', suite: 'calc', taskKeys: TASK_KEYS, mode: 'strict', attempts: 1, maxTries: 2, retryDelayMs: 10, outputPrefix: 'sweeps/sweep-t/shards/ckpt-1/calc/strict', ...extra };
}

async function readResult(index: number): Promise<ShardResult> {
  const body = await ports.blobs.get(`sweeps/sweep-t/shards/ckpt-1/calc/strict/shard-${index}.json`);
  expect(body).toBeDefined();
  return JSON.parse(new TextDecoder().decode(body!)) as ShardResult;
}

/** Runs the entry point as the image does (`node batch-images/rollout/entrypoint.ts`). */
function runEntrypoint(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [ENTRYPOINT], { cwd: REPOSITORY_ROOT, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('close', (code) => resolve({ code, output }));
  });
}

describe('rollout entry point', () => {
  it('runs a 2-child array job from the local jobs driver, one shard per child, results written per shard', async () => {
    server = await startScriptedModelServer(fixScript('return a + b'));
    await ports.blobs.put('specs/t.json', JSON.stringify(spec({ model: `openai:scripted-coder@${server.baseUrl}`, checkpoint: 'ckpt-1' })));
    jobs = new LocalJobs({ dataDir, pollMs: 50 });
    const { jobId } = await jobs.submit({
      name: 'rollout-sweep-t',
      definition: 'rollout',
      category: 'evaluation',
      pool: 'gpu',
      arraySize: 2,
      timeoutSeconds: 240,
      // FLYWHEEL_DATA_DIR comes from the driver: the job's ports are the runtime's.
      environment: { FLYWHEEL_SHARD_KEY: 'specs/t.json', FLYWHEEL_SHARD_COUNT: '2' },
    });
    const done = await waitForJob(jobs, jobId, { pollMs: 100, timeoutMs: 200_000 });
    const logs = await Promise.all([0, 1].map(async (i) => (await jobs!.logs(jobId, { arrayIndex: i })).lines.map((l) => l.message).join('\n')));
    expect(done.status, logs.join('\n----\n')).toBe('SUCCEEDED');
    expect((await jobs.children(jobId)).map((c) => [c.index, c.status, c.exitCode])).toEqual([
      [0, 'SUCCEEDED', 0],
      [1, 'SUCCEEDED', 0],
    ]);
    expect(logs[0]).toContain('shard 1/2');
    expect(logs[1]).toContain('shard 2/2');

    const [r0, r1] = [await readResult(0), await readResult(1)];
    expect(r0).toMatchObject({ runId: 'sweep-t.ckpt-1.calc.strict', evalRunId: 'sweep-t.ckpt-1.calc.strict.shard-0', shardIndex: 0, shardCount: 2, status: 'completed', exitCode: 0, taskIds: ['calc/add'], jobId: `${jobId}:0`, jobAttempt: 1 });
    expect(r1).toMatchObject({ shardIndex: 1, taskIds: ['calc/add-again'], jobId: `${jobId}:1` });
    for (const r of [r0, r1]) expect(r.results.counts).toEqual({ passed: 1, failed: 0, ungraded: 0, 'infrastructure-error': 0 });
    const shardRecords = await ports.records.query({ partition: 'ROLLOUT#sweep-t.ckpt-1.calc.strict' });
    expect(shardRecords.items.map((i) => [i.sk, i['status'], i['resultKey']])).toEqual([
      ['SHARD#00000', 'completed', 'sweeps/sweep-t/shards/ckpt-1/calc/strict/shard-0.json'],
      ['SHARD#00001', 'completed', 'sweeps/sweep-t/shards/ckpt-1/calc/strict/shard-1.json'],
    ]);
    // The attempts are in the harness's records under each shard's run id.
    const attempts = await ports.records.query({ partition: 'EVAL#sweep-t.ckpt-1.calc.strict.shard-1', sort: { beginsWith: 'ATTEMPT#' } });
    expect(attempts.items.map((i) => [i['taskId'], i['status']])).toEqual([['calc/add-again', 'passed']]);
    // The task's repository is as it was: both commits, nothing left by the strict strip.
    expect(gitSync(repoDir, ['log', '--oneline']).split('\n')).toHaveLength(2);
  }, 240_000);

  it('serves the model with FLYWHEEL_VLLM_COMMAND: starts it, waits for /v1/models, uses it, stops it', async () => {
    const port = await freePort();
    const pidFile = join(root, 'vllm.pid');
    const { code, output } = await runEntrypoint({
      FLYWHEEL_DATA_DIR: dataDir,
      // The variables win over the spec's vllm section: its command would fail, its port is another.
      FLYWHEEL_SHARD_SPEC: JSON.stringify(spec({ taskKeys: [TASK_KEYS[0]!], checkpoint: 'ckpt-7', vllm: { command: 'exit 9', port: port === 65535 ? 65534 : port + 1 } })),
      FLYWHEEL_VLLM_COMMAND: `"${process.execPath}" test/support/fake-vllm.ts --port "$FLYWHEEL_VLLM_PORT" --served-model-name ckpt-7 --load-ms 400`,
      FLYWHEEL_VLLM_PORT: String(port),
      FAKE_VLLM_PID_FILE: pidFile,
    });
    expect(code, output).toBe(ROLLOUT_EXIT_CODES.completed);
    expect(output).toContain(`vLLM ready at http://127.0.0.1:${port}/v1 serving ckpt-7`);
    const result = await readResult(0);
    expect(result.results.model).toBe(`openai:ckpt-7@http://127.0.0.1:${port}/v1`);
    expect(result.results.counts.passed).toBe(1);
    // Stopped with SIGTERM (the stand-in removes its pid file then) and gone.
    expect(existsSync(pidFile)).toBe(false);
    expect(output).toContain('fake vLLM serving ckpt-7');
  }, 120_000);

  it('serves the spec’s vllm.command on the spec’s vllm.port over the checkpoint unpacked from artifactKey', async () => {
    const ckpt = join(root, 'ckpt');
    mkdirSync(ckpt);
    writeFileSync(join(ckpt, 'name.txt'), 'ckpt-from-artifact');
    execFileSync('tar', ['-cf', join(root, 'ckpt.tar'), '-C', ckpt, '.']);
    await ports.blobs.put('checkpoints/ckpt-9.tar', readFileSync(join(root, 'ckpt.tar')));
    const port = await freePort();
    // No FLYWHEEL_VLLM_PORT: the port is the spec's (plan-shards writes the checkpoint's serving.port there).
    const { code, output } = await runEntrypoint({
      FLYWHEEL_DATA_DIR: dataDir,
      FLYWHEEL_SHARD_SPEC: JSON.stringify(
        spec({
          taskKeys: [TASK_KEYS[1]!],
          artifactKey: 'checkpoints/ckpt-9.tar',
          vllm: { command: `"${process.execPath}" test/support/fake-vllm.ts --port "$FLYWHEEL_VLLM_PORT" --served-model-name "$(cat "$FLYWHEEL_CHECKPOINT_DIR/name.txt")"`, servedModelName: 'ckpt-from-artifact', port },
        }),
      ),
    });
    expect(code, output).toBe(ROLLOUT_EXIT_CODES.completed);
    expect(output).toContain(`starting vLLM on port ${port}:`);
    expect(output).toContain('checkpoint checkpoints/ckpt-9.tar unpacked into');
    const result = await readResult(0);
    expect(result.results.model).toBe(`openai:ckpt-from-artifact@http://127.0.0.1:${port}/v1`);
    expect(result.results.counts.passed).toBe(1);
  }, 120_000);

  it('exits 3 on bad input and 1 when the infrastructure breaks', async () => {
    const missing = await runEntrypoint({ FLYWHEEL_DATA_DIR: dataDir });
    expect(missing.code).toBe(ROLLOUT_EXIT_CODES.badInput);
    expect(missing.output).toContain('bad input: Flywheel.ValidationError: set FLYWHEEL_SHARD_KEY');
    const invalid = await runEntrypoint({ FLYWHEEL_DATA_DIR: dataDir, FLYWHEEL_SHARD_SPEC: JSON.stringify({ ...spec(), attempts: 0, suiteDir: '/x' }) });
    expect(invalid.code).toBe(ROLLOUT_EXIT_CODES.badInput);
    expect(invalid.output).toMatch(/attempts: .*taskKeys: exactly one of taskKeys and suiteDir/s);
    const noPorts = await runEntrypoint({ FLYWHEEL_SHARD_SPEC: JSON.stringify(spec()) });
    expect(noPorts.code).toBe(ROLLOUT_EXIT_CODES.badInput);
    expect(noPorts.output).toContain('Missing environment variables: FLYWHEEL_TABLE, FLYWHEEL_BUCKET');
    const outside = await runEntrypoint({ FLYWHEEL_DATA_DIR: dataDir, FLYWHEEL_SHARD_SPEC: JSON.stringify(spec({ model: 'openai:m@http://127.0.0.1:9/v1' })), AWS_BATCH_JOB_ARRAY_INDEX: '2', FLYWHEEL_SHARD_COUNT: '2' });
    expect(outside.code).toBe(ROLLOUT_EXIT_CODES.badInput);
    const vllmDies = await runEntrypoint({ FLYWHEEL_DATA_DIR: dataDir, FLYWHEEL_SHARD_SPEC: JSON.stringify(spec()), FLYWHEEL_VLLM_COMMAND: 'echo no GPU >&2; exit 7', FLYWHEEL_VLLM_PORT: String(await freePort()) });
    expect(vllmDies.code).toBe(ROLLOUT_EXIT_CODES.infrastructure);
    expect(vllmDies.output).toContain('[vllm] no GPU');
    expect(vllmDies.output).toContain('infrastructure failure: Flywheel.TransientError: vLLM exited before it was ready (code 7)');
  }, 120_000);
});
