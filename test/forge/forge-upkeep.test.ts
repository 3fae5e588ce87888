import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { calibrateDifficulty } from '../../lib/forge/calibrate-difficulty.ts';
import { forgeRepository, type ForgeRunResult } from '../../lib/forge/forge-repository.ts';
import { exportSuite, listSuiteTasks } from '../../lib/forge/forge-records.ts';
import { taskPk } from '../../lib/forge/record-keys.ts';
import { recertifySuite } from '../../lib/forge/recertify-suite.ts';
import { parseForgeSpec } from '../../lib/forge/schemas.ts';
import { loadSuite } from '../../lib/harness/eval/load-suite.ts';
import { NamespaceSandboxProvider } from '../../lib/harness/sandbox/namespace-sandbox.ts';
import { createModel } from '../../lib/models/create-model.ts';
import { startScriptedModelServer, type ScriptedModelServer, type ScriptStep } from '../support/scripted-model-server.ts';
import { CALC_TS, CountingProvider, NODE_TEST_COMMAND, candidate, stubBody, tsRepoFiles, writeRepo } from './support/forge-fixtures.ts';

describe('forge upkeep: re-certification retires rotten tasks; difficulty calibration through the harness', () => {
  let repo: string;
  let data: string;
  let ports: LocalPorts;
  let provider: CountingProvider;
  let result: ForgeRunResult;

  beforeAll(async () => {
    repo = await writeRepo(tsRepoFiles());
    data = await mkdtemp(join(tmpdir(), 'fw-forge-upkeep-'));
    ports = openLocalPorts(join(data, '.flywheel'));
    provider = new CountingProvider(new NamespaceSandboxProvider({ root: join(data, 'sandbox') }));
    const spec = parseForgeSpec({ name: 'calc', repo: { kind: 'local', path: repo }, testCommand: NODE_TEST_COMMAND, runner: { kind: 'node-test' }, suite: 'upkeep', k: 2 });
    result = await forgeRepository({
      spec,
      provider,
      ports,
      runId: 'upkeep-run',
      candidates: async () => [
        candidate({ id: 'add-body', symbols: ['add'], testFiles: ['test/calc.test.ts'], edits: [{ path: 'src/calc.ts', content: stubBody(CALC_TS, 'export function add(a: number, b: number): number {\n', '  const sum = a + b;\n  return sum;\n') }] }),
        candidate({ id: 'multiply-body', symbols: ['multiply'], testFiles: ['test/calc.test.ts'], edits: [{ path: 'src/calc.ts', content: stubBody(CALC_TS, 'export function multiply(a: number, b: number): number {\n', '  let product = 0;\n  for (let i = 0; i < b; i++) product = add(product, a);\n  return product;\n') }] }),
      ],
    });
  }, 240_000);

  afterAll(async () => {
    ports?.close();
    await rm(data, { recursive: true, force: true });
    await rm(repo, { recursive: true, force: true });
  });

  it('re-certifies on demand: a task that still holds is kept, one whose suite rotted is retired with the reason', async () => {
    expect(result.tasks).toHaveLength(2);
    const [addTask, mulTask] = [result.tasks.find((t) => t.taskId.includes('.add-'))!, result.tasks.find((t) => t.taskId.includes('.multiply-'))!];
    const kept = await recertifySuite({ suite: 'upkeep', provider, ports, k: 1, taskIds: [mulTask.taskId] });
    expect(kept).toEqual([expect.objectContaining({ taskId: mulTask.taskId, result: 'kept' })]);

    provider.extraEnv = { FORGE_ROT: '1' };
    try {
      const retired = await recertifySuite({ suite: 'upkeep', provider, ports, k: 1, taskIds: [addTask.taskId] });
      expect(retired[0]!.result).toBe('retired');
      expect(retired[0]!.reason).toMatch(/^pass-to-pass-broken: .*test::shout shouts/);
    } finally {
      provider.extraEnv = {};
    }
    const record = await ports.records.get(taskPk('upkeep', addTask.taskId), 'TASK');
    expect(record?.status).toBe('retired');
    expect(record?.retiredReason).toMatch(/pass-to-pass-broken/);
    // A retired task leaves the exported suite; a second pass skips it.
    const files = await exportSuite(ports, { suite: 'upkeep', dir: join(data, 'suite'), reposDir: join(data, 'repos') });
    expect(files).toHaveLength(1);
    expect((await loadSuite(join(data, 'suite'))).map((t) => t.task.id)).toEqual([mulTask.taskId]);
    const again = await recertifySuite({ suite: 'upkeep', provider, ports, k: 1 });
    expect(again.find((o) => o.taskId === addTask.taskId)?.result).toBe('skipped');
  }, 120_000);

  describe('calibration', () => {
    let server: ScriptedModelServer;
    let solveEvery = 1;
    let attempt = 0;
    beforeAll(async () => {
      // A model that restores calc.ts on every `solveEvery`-th attempt and gives up on the others.
      server = await startScriptedModelServer((request): ScriptStep => {
        const messages = request.body['messages'] as Array<{ role: string }>;
        const assistant = messages.filter((m) => m.role === 'assistant').length;
        if (assistant === 0) {
          const solve = attempt++ % solveEvery === 0;
          return solve
            ? { reply: { toolCalls: [{ name: 'write_file', arguments: { path: 'src/calc.ts', content: CALC_TS } }] } }
            : { reply: { toolCalls: [{ name: 'submit', arguments: {} }] } };
        }
        return { reply: { toolCalls: [{ name: 'submit', arguments: {} }] } };
      });
    });
    afterAll(async () => server?.close());

    it('stores each active task’s pass rate; a task the model always solves is marked too easy', async () => {
      solveEvery = 1;
      attempt = 0;
      const model = createModel(`openai:scripted@${server.baseUrl}`);
      const { outcomes } = await calibrateDifficulty({ suite: 'upkeep', model, provider, ports, k: 2, runId: 'calib-easy' });
      const active = (await listSuiteTasks(ports.records, 'upkeep')).filter((r) => r.status === 'active');
      expect(outcomes.map((o) => o.taskId)).toEqual(active.map((r) => r.taskId));
      expect(outcomes[0]).toMatchObject({ scored: 2, passed: 2, passRate: 1, tooEasy: true, inBand: false });
      const record = await ports.records.get(taskPk('upkeep', outcomes[0]!.taskId), 'TASK');
      expect(record?.passRate).toBe(1);
      expect(record?.calibration).toMatchObject({ model: expect.stringContaining('scripted'), attempts: 2, passed: 2, tooEasy: true });
    }, 120_000);

    it('selects by band: a task solved half the time is in the 10%–70% band', async () => {
      solveEvery = 2;
      attempt = 0;
      const model = createModel(`openai:scripted@${server.baseUrl}`);
      const { outcomes } = await calibrateDifficulty({ suite: 'upkeep', model, provider, ports, k: 2, band: [0.1, 0.7], runId: 'calib-band' });
      expect(outcomes[0]).toMatchObject({ scored: 2, passed: 1, passRate: 0.5, inBand: true, tooEasy: false });
    }, 120_000);
  });
});
