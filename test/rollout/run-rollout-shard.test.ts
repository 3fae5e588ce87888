/**
 * runRolloutShard on a real calc task in the namespace sandbox: a model endpoint that stays down makes the shard
 * `incomplete` (exit 2, results still written), and running the shard again — what a Batch retry does — resumes
 * and completes it (exit 0) under the same shard run id.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROLLOUT_EXIT_CODES } from '../../lib/rollout/rollout-exit-codes.ts';
import { runRolloutShard, shardRecordKeys } from '../../lib/rollout/run-rollout-shard.ts';
import { parseShardSpec } from '../../lib/rollout/shard-spec.ts';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { NamespaceSandboxProvider } from '../../lib/harness/sandbox/namespace-sandbox.ts';
import { ModelUnavailableError } from '../../lib/models/model-errors.ts';
import { openAiCompatibleModel } from '../../lib/models/openai-compatible.ts';
import type { ModelsPort } from '../../lib/ports/models.ts';
import { fixScript, makeCalcSuite } from '../harness/eval/calc-suite.ts';
import { startScriptedModelServer, type ScriptedModelServer } from '../support/scripted-model-server.ts';

let root: string;
let ports: LocalPorts;
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  ports.close();
  rmSync(root, { recursive: true, force: true });
});

const down: ModelsPort = {
  id: 'openai:down@http://127.0.0.1:9/v1',
  chat: async () => {
    throw new ModelUnavailableError('model endpoint unavailable after 6 attempts (last: ECONNREFUSED)', 6);
  },
  embed: async () => {
    throw new ModelUnavailableError('down', 1);
  },
};

describe('runRolloutShard', () => {
  it('reports an endpoint that stays down as incomplete (exit 2), and a rerun resumes it to completed (exit 0)', async () => {
    root = mkdtempSync(join(tmpdir(), 'fw-shard-'));
    ports = openLocalPorts(join(root, 'data'));
    const { suiteDir } = makeCalcSuite(root);
    const spec = parseShardSpec({ schemaVersion: 1, runId: 'r1', suiteDir, mode: 'strict', attempts: 1, maxTries: 1, retryDelayMs: 0, outputPrefix: 'out/r1' }, 'test');
    const provider = new NamespaceSandboxProvider({ root: join(root, 'sb') });
    const common = { spec, shardIndex: 0, shardCount: 1, ports, provider, workDir: join(root, 'work') };

    const first = await runRolloutShard({ ...common, model: down, jobId: 'job:0', jobAttempt: 1 });
    expect(first.exitCode).toBe(ROLLOUT_EXIT_CODES.incomplete);
    expect(first.result).toMatchObject({ status: 'incomplete', evalRunId: 'r1.shard-0', taskIds: ['calc/add'], jobAttempt: 1 });
    expect(first.result.results.counts['infrastructure-error']).toBe(1);
    expect(await ports.records.get(shardRecordKeys('r1', 0).pk, shardRecordKeys('r1', 0).sk)).toMatchObject({ status: 'incomplete', exitCode: 2, resultKey: 'out/r1/shard-0.json' });

    server = await startScriptedModelServer(fixScript('return a + b'));
    const model = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'scripted-coder' });
    const second = await runRolloutShard({ ...common, model, jobId: 'job:0', jobAttempt: 2 });
    expect(second.exitCode).toBe(ROLLOUT_EXIT_CODES.completed);
    expect(second.result.results.counts).toEqual({ passed: 1, failed: 0, ungraded: 0, 'infrastructure-error': 0 });
    const stored = JSON.parse(new TextDecoder().decode((await ports.blobs.get('out/r1/shard-0.json'))!));
    expect(stored).toMatchObject({ status: 'completed', jobAttempt: 2 });
  }, 60_000);

  it('refuses a spec with both or neither of taskKeys and suiteDir, naming the fields', () => {
    expect(() => parseShardSpec({ schemaVersion: 1, runId: 'r', mode: 'strict', attempts: 1, outputPrefix: 'o' }, 's')).toThrow(/taskKeys: exactly one of taskKeys and suiteDir/);
    expect(() => parseShardSpec({ schemaVersion: 1, runId: 'r bad', mode: 'fast', attempts: 0, outputPrefix: '/o/', taskKeys: ['k'] }, 's')).toThrow(/runId: .*mode: .*attempts: .*outputPrefix: /s);
  });
});
