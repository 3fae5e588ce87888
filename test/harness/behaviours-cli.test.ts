/**
 * The example suite of behavioural cases through `flywheel eval run` (the CLI as a child process, the strict
 * namespace sandbox, the rubric judge): one scripted model server plays the agent and the judge of every case
 * (`test/support/behaviour-replay.ts`).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { behaviourReplay } from '../support/behaviour-replay.ts';
import { startScriptedModelServer, type ScriptedModelServer } from '../support/scripted-model-server.ts';

const run = promisify(execFile);
const EXAMPLES = join(import.meta.dirname, '../../examples/behaviours');

let server: ScriptedModelServer | undefined;
let root: string | undefined;
afterEach(async () => {
  await server?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('flywheel eval run on examples/behaviours', () => {
  it('grades every case by the judge; the simulated-user case plays its user with --user-model', async () => {
    const replay = await behaviourReplay(EXAMPLES);
    server = await startScriptedModelServer(replay.script);
    root = await mkdtemp(join(tmpdir(), 'fw-behaviours-cli-'));
    const model = `openai:scripted@${server.baseUrl}`;
    const args = ['node', 'bin/flywheel.ts', 'eval', 'run', '--suite', join(EXAMPLES, 'tasks'), '--model', model, '--judge-model', model,
      '--user-model', model, '--mode', 'strict', '--concurrency', '2', '--run-id', 'b1', '--data-dir', join(root, 'data'), '--max-tries', '1', '--json'];
    // Exit 0: every attempt was scored (none is an infrastructure error).
    const out = await run('npx', args, { cwd: process.cwd() }).catch((e: { stdout: string; stderr: string; code: number }) => e);
    expect('code' in out ? `${out.code}: ${out.stderr.slice(-2000)}` : 0).toBe(0);
    const results = JSON.parse(await readFile(join(root, 'data', 'evals', 'b1', 'results-strict.json'), 'utf8')) as {
      perTask: Array<{ taskId: string; passed: number; infrastructureErrors: number }>;
      counts: Record<string, number>;
    };
    const byTask = Object.fromEntries(results.perTask.map((t) => [t.taskId, t.passed === 1 ? 'passed' : t.infrastructureErrors === 1 ? 'infrastructure-error' : 'failed']));
    expect(byTask).toEqual({
      'behaviours/agents-md': 'passed',
      'behaviours/chat-report': 'passed',
      'behaviours/clarification': 'passed',
      'behaviours/incident-triage': 'passed',
      'behaviours/interruption': 'passed',
      'behaviours/long-horizon': 'passed',
      'behaviours/new-tool': 'passed',
      'behaviours/questionable-instruction': 'passed',
      'behaviours/tool-removed': 'passed',
    });
    expect(replay.served.get('judge:incident-triage')).toBe(1);
    expect(results.counts['infrastructure-error']).toBe(0);
    // The simulated user answered the agent's question, and the judge graded the case.
    expect(replay.served.get('user:clarification')).toBeGreaterThanOrEqual(1);
    expect(replay.served.get('judge:clarification')).toBe(1);
  }, 120_000);

  it('as a job on the jobs port (the rollout entry point), the user model from FLYWHEEL_USER_MODEL travels in the shard spec', async () => {
    const replay = await behaviourReplay(EXAMPLES);
    server = await startScriptedModelServer(replay.script);
    root = await mkdtemp(join(tmpdir(), 'fw-behaviours-jobs-'));
    const model = `openai:scripted@${server.baseUrl}`;
    const args = ['node', 'bin/flywheel.ts', 'eval', 'run', '--suite', join(EXAMPLES, 'tasks'), '--model', model, '--judge-model', model,
      '--mode', 'strict', '--concurrency', '2', '--run-id', 'b2', '--data-dir', join(root, 'data'), '--max-tries', '1', '--jobs', '1', '--json'];
    const env = { ...process.env, FLYWHEEL_USER_MODEL: model };
    const out = await run('npx', args, { cwd: process.cwd(), env }).catch((e: { stdout: string; stderr: string; code: number }) => e);
    expect('code' in out ? `${out.code}: ${out.stderr.slice(-2000)}` : 0).toBe(0);
    const results = JSON.parse(await readFile(join(root, 'data', 'evals', 'b2', 'results-strict.json'), 'utf8')) as { counts: Record<string, number> };
    expect(results.counts).toMatchObject({ passed: 9, failed: 0, 'infrastructure-error': 0 });
    const ports = openLocalPorts(join(root, 'data'));
    try {
      const spec = JSON.parse(new TextDecoder().decode((await ports.blobs.get('evals/b2/shard-spec.json'))!)) as { userModel?: string; judgeModel?: string };
      expect(spec).toMatchObject({ userModel: model, judgeModel: model });
    } finally {
      ports.close();
    }
    expect(replay.served.get('user:clarification')).toBeGreaterThanOrEqual(1);
  }, 180_000);
});
