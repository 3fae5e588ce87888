import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLocalPorts, type LocalPorts } from '../../../lib/drivers/local/local-ports.ts';
import { environmentFacts, evalAttemptId } from '../../../lib/harness/attempt/attempt-record.ts';
import { getAttemptRecord } from '../../../lib/harness/attempt/read-attempt-records.ts';
import { harnessGrader } from '../../../lib/harness/attempt/harness-grader.ts';
import { runAttempt } from '../../../lib/harness/attempt/run-attempt.ts';
import { loadSuite } from '../../../lib/harness/eval/load-suite.ts';
import { NamespaceSandboxProvider } from '../../../lib/harness/sandbox/namespace-sandbox.ts';
import type { SandboxProvider, SandboxSession } from '../../../lib/harness/sandbox/sandbox.ts';
import { loadTrajectory } from '../../../lib/harness/trajectory/store-trajectory.ts';
import { openAiCompatibleModel } from '../../../lib/models/openai-compatible.ts';
import { startScriptedModelServer, type Script, type ScriptedModelServer } from '../../support/scripted-model-server.ts';
import { CORRECT_FIX, fixScript, makeCalcSuite, WRONG_FIX } from './calc-suite.ts';

let root: string;
let ports: LocalPorts;
let server: ScriptedModelServer | undefined;
let provider: NamespaceSandboxProvider;
let repoDir: string | undefined;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'fw-attempt-'));
  ports = openLocalPorts(join(root, 'data'));
  provider = new NamespaceSandboxProvider({ root: join(root, 'sandboxes') });
});
afterEach(async () => {
  // The task's repository is untouched by the attempts: both commits, HEAD on the later one.
  if (repoDir) expect(execFileSync('git', ['log', '--oneline'], { cwd: repoDir }).toString().trim().split('\n')).toHaveLength(2);
  repoDir = undefined;
  await server?.close();
  server = undefined;
  ports.close();
  await rm(root, { recursive: true, force: true });
});

async function attempt(script: Script, overrides: Parameters<typeof makeCalcSuite>[1] = {}, options: { graded?: boolean; mode?: 'strict' | 'lenient'; agentProvider?: SandboxProvider } = {}) {
  const n = 0;
  repoDir = makeCalcSuite(root, overrides).repoDir;
  const [suiteTask] = await loadSuite(join(root, 'suite'));
  server = await startScriptedModelServer(script);
  const model = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'scripted-coder', retry: { baseDelayMs: 1, maxDelayMs: 2, maxAttempts: 2 } });
  return runAttempt({
    runId: 'r1',
    n,
    task: suiteTask!.task,
    sourceDir: suiteTask!.sourceDir,
    mode: options.mode ?? 'strict',
    model,
    provider: options.agentProvider ?? provider,
    ports,
    attemptId: evalAttemptId('r1', suiteTask!.task.id, options.mode ?? 'strict', n),
    ...(options.graded === false ? {} : { grade: harnessGrader({ provider, blobs: ports.blobs }) }),
    retry: { maxTries: 2, baseDelayMs: 1, maxDelayMs: 2 },
  });
}

describe('runAttempt in the strict namespace sandbox, graded by gradeAttempt', () => {
  it('a correct fix passes; the record, trajectory and diff are stored under the eval keys', async () => {
    const record = await attempt(fixScript('return a + b', { firstCommand: 'git log --oneline | wc -l; git log --all --oneline | grep -c "fix add"' }));
    expect(record.status).toBe('passed');
    expect(record.grade?.passed).toBe(true);
    expect(record.stopReason).toEqual({ kind: 'submitted', answer: 'done' });
    expect(record.tries).toBe(1);
    expect(record.history.map((t) => t.outcome)).toEqual(['completed']);
    expect(record.usage).toEqual({ promptTokens: 460, completionTokens: 45, cachedTokens: 0 });
    const stored = await getAttemptRecord(ports.records, 'r1', 'calc/add', 'strict', 0);
    expect(stored).toMatchObject({ pk: 'EVAL#r1', sk: 'ATTEMPT#calc/add#strict#0', status: 'passed', trajectoryKey: record.trajectoryKey });
    const trajectory = await loadTrajectory(ports.blobs, record.trajectoryKey!);
    expect(trajectory.header.taskId).toBe('calc/add');
    expect(trajectory.header.mode).toBe('strict');
    // Strict mode: inside the attempt the history holds the base commit only; the later fix commit is out of reach.
    const gitLog = trajectory.steps.find((s) => s.type === 'tool_result' && s.name === 'bash');
    expect(gitLog?.type === 'tool_result' && gitLog.content).toMatch(/^1\n0\b/);
    const diff = new TextDecoder().decode(await ports.blobs.get(record.diffKey!));
    expect(diff).toContain('+    return a + b');
  });

  it('lenient mode keeps the history (the later commit is visible) and grades the same way', async () => {
    const record = await attempt(fixScript('return a + b', { firstCommand: 'git log --all --oneline | grep -c "fix add"' }), {}, { mode: 'lenient' });
    expect(record).toMatchObject({ status: 'passed', mode: 'lenient', sk: 'ATTEMPT#calc/add#lenient#0' });
    const trajectory = await loadTrajectory(ports.blobs, record.trajectoryKey!);
    const gitLog = trajectory.steps.find((s) => s.type === 'tool_result' && s.name === 'bash');
    expect(gitLog?.type === 'tool_result' && gitLog.content).toMatch(/^1\b/);
  });

  it('a wrong fix fails, naming the failToPass test', async () => {
    const record = await attempt(WRONG_FIX);
    expect(record.status).toBe('failed');
    expect(record.grade?.passed).toBe(false);
    expect(record.grade?.reasons?.join('\n')).toMatch(/fail-to-pass-not-passed: test_calc.py::test_add/);
    expect(record.tries).toBe(1);
  });

  it('a model endpoint that stays down is an infrastructure error with every try kept, not a failure', async () => {
    const record = await attempt(() => ({ error: { status: 503 } }));
    expect(record.status).toBe('infrastructure-error');
    expect(record.grade).toBeUndefined();
    expect(record.tries).toBe(2);
    expect(record.history.map((t) => [t.try, t.outcome, t.infrastructureError?.phase, t.infrastructureError?.error])).toEqual([
      [1, 'infrastructure-error', 'agent', 'Flywheel.ModelUnavailable'],
      [2, 'infrastructure-error', 'agent', 'Flywheel.ModelUnavailable'],
    ]);
    // 2 tries × 2 HTTP attempts each.
    expect(server!.chatRequests()).toHaveLength(4);
    // Each try's trajectory is kept under its own key.
    expect(new Set(record.history.map((t) => t.trajectoryKey)).size).toBe(2);
  });

  it('a setup command that fails is an infrastructure error (setup-failed), and the model is never called', async () => {
    const record = await attempt(CORRECT_FIX, { setupCommand: 'echo broken-deps >&2; exit 3' });
    expect(record.status).toBe('infrastructure-error');
    expect(record.history.map((t) => t.infrastructureError?.phase)).toEqual(['setup-failed', 'setup-failed']);
    expect(record.history[0]!.infrastructureError!.message).toMatch(/exited 3.*broken-deps/s);
    expect(server!.chatRequests()).toHaveLength(0);
  });

  it('without a grader the attempt is ungraded, never passed or failed, and its diff is kept for later grading', async () => {
    const record = await attempt(CORRECT_FIX, {}, { graded: false });
    expect(record.status).toBe('ungraded');
    expect(record.grade).toBeUndefined();
    expect(new TextDecoder().decode(await ports.blobs.get(record.diffKey!))).toContain('+    return a + b');
  });

  it('the record names the task environment the sandbox says its commands ran against (id, layer keys, removed packages, notes)', async () => {
    const manifest = {
      schemaVersion: 1,
      kind: 'python',
      key: 'python-3f1c0a',
      recipeVersion: 2,
      target: '/opt/flywheel/python-env',
      toolchain: { version: '3.11.7' },
      packageSource: { index: 'https://pypi.org/simple' },
      inputs: ['requirements.txt'],
      requested: ['requests==2.32.3'],
      skipped: [],
      project: { names: ['calc'], topLevel: ['calc'] },
      installed: [{ name: 'requests', version: '2.32.3' }],
      removed: [{ name: 'calc', version: '1.0.0', path: 'lib/python3.11/site-packages/calc', reason: 'provides the import package calc' }],
      notes: ['pytest 9.9 is not on the index: installed 8.3.4'],
      builtAt: '2026-12-03T00:00:00.000Z',
      buildMs: 1234,
    };
    const taskEnvironment = { id: 'env-9a8b7c', manifests: [manifest, 'not a manifest', { kind: 'node', key: 'node-55aa', removed: [{ name: 'x' }], notes: [3, 'kept'] }] };
    // The sandbox the agent runs in says which environment it resolved (`SandboxSession.taskEnvironment`).
    const agentProvider: SandboxProvider = {
      open: async (spec) => {
        const s = await provider.open(spec);
        const session: SandboxSession = {
          workdir: s.workdir,
          mode: s.mode,
          exec: (command, opts) => s.exec(command, opts),
          diff: () => s.diff(),
          observations: () => s.observations(),
          ...(s.reaudit ? { reaudit: () => s.reaudit!() } : {}),
          close: () => s.close(),
          taskEnvironment,
        };
        return session;
      },
    };
    const record = await attempt(CORRECT_FIX, {}, { agentProvider });
    expect(record.status).toBe('passed');
    const expected = {
      id: 'env-9a8b7c',
      layers: [
        { kind: 'python', key: 'python-3f1c0a', removed: [{ name: 'calc', version: '1.0.0', path: 'lib/python3.11/site-packages/calc', reason: 'provides the import package calc' }], notes: ['pytest 9.9 is not on the index: installed 8.3.4'] },
        { kind: 'node', key: 'node-55aa', removed: [{ name: 'x', version: '' }], notes: ['kept'] },
      ],
    };
    expect(record.environment).toEqual(expected);
    expect((await getAttemptRecord(ports.records, 'r1', 'calc/add', 'strict', 0))?.environment).toEqual(expected);
    // Without manifests only the id; a session without the property records none (environmentFacts is not asked).
    expect(environmentFacts({ id: 'env-1' })).toEqual({ id: 'env-1', layers: [] });
  });

  it('a sandbox that cannot open is an infrastructure error (sandbox)', async () => {
    const record = await attempt(CORRECT_FIX, { repo: { kind: 'git', url: '../repo', commit: 'deadbeefdeadbeefdeadbeefdeadbeefdeadbeef' } });
    expect(record.status).toBe('infrastructure-error');
    expect(record.history[0]!.infrastructureError).toMatchObject({ phase: 'sandbox', error: 'Flywheel.SandboxSetupError' });
    expect(server!.chatRequests()).toHaveLength(0);
  });
});
