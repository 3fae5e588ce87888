import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FsBlobs } from '../../lib/drivers/local/fs-blobs.ts';
import { runAgent } from '../../lib/harness/agent/run-agent.ts';
import { LimitsSchema } from '../../lib/harness/task/task-schema.ts';
import { TRAJECTORY_JSON_SCHEMA_PATH, trajectoryJsonSchemaText } from '../../lib/harness/trajectory/trajectory-json-schema.ts';
import { storeTrajectory } from '../../lib/harness/trajectory/store-trajectory.ts';
import { openAiCompatibleModel } from '../../lib/models/openai-compatible.ts';
import { openPlainDirSandbox } from '../support/plain-dir-sandbox.ts';
import { reply, startScriptedModelServer } from '../support/scripted-model-server.ts';
import { tempDirs } from '../support/temp-dirs.ts';

const tempDir = tempDirs('flywheel-trajectory-contract-');
const PYTEST_FILE = 'batch-images/trainer/tests/test_trajectory_contract.py';

/** A real harness attempt (the agent loop against a scripted OpenAI-protocol server) stored as the harness stores it. */
async function harnessTrajectoryFile(): Promise<string> {
  const server = await startScriptedModelServer([
    reply.tool('nope', {}, { promptTokenIds: [1, 2], completionTokenIds: [3], logprobs: [-0.3] }),
    reply.tool('write_file', '{"path": ', { promptTokenIds: [1, 2, 3, 4], completionTokenIds: [5], logprobs: [-0.2] }), // bad arguments
    reply.tools(
      [
        { name: 'write_file', arguments: { path: 'fix.txt', content: 'fixed\n' } },
        { name: 'bash', arguments: { command: 'cat fix.txt' } },
      ],
      { content: 'writing the fix', promptTokenIds: [1, 2, 3, 4, 5, 6], completionTokenIds: [7, 8], logprobs: [-0.1, -0.2] },
    ),
    reply.tool('submit', { answer: 'done' }),
  ]);
  const sandbox = await openPlainDirSandbox({ files: { 'a.txt': 'a\n' } });
  try {
    const result = await runAgent({
      attemptId: 'att-contract',
      taskId: 'task-1',
      suite: 'unit',
      instruction: 'fix it',
      model: openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'm' }),
      sandbox,
      limits: LimitsSchema.parse({}),
      policy: { checkpoint: 'ckpt-1', weightVersion: 'w3' },
    });
    const root = tempDir();
    const key = await storeTrajectory(new FsBlobs(root, { fsync: false }), result.trajectory);
    return join(root, key);
  } finally {
    await server.close();
    await sandbox.close();
  }
}

function pytest(files: string[]) {
  return spawnSync('python3', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', PYTEST_FILE], {
    encoding: 'utf8',
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', FLYWHEEL_TRAJECTORY_JSONL: files.join(':') },
  });
}

describe('the trajectory contract between the TypeScript harness and Python', () => {
  it('JSON Lines written by a real harness attempt validate, line by line, in Python against the generated schema', async () => {
    const file = await harnessTrajectoryFile();
    const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { type: string; kind?: string; tokens?: unknown });
    // the attempt exercised what training reads: token ids, harness events, tool results, the outcome
    expect(lines.filter((l) => l.type === 'assistant' && l.tokens).length).toBeGreaterThanOrEqual(3);
    expect(lines.filter((l) => l.type === 'event').map((l) => l.kind)).toEqual(expect.arrayContaining(['tool.unknown', 'tool.bad-arguments']));
    const r = pytest([file]);
    expect(r.stdout).toMatch(/\d+ passed/);
    expect(r.stdout).not.toMatch(/failed|skipped/);
    expect(r.status).toBe(0);
  });

  it('a line that breaks the schema fails the Python check (the check is not vacuous)', async () => {
    const file = await harnessTrajectoryFile();
    const broken = join(tempDir(), 'broken.jsonl');
    writeFileSync(broken, readFileSync(file, 'utf8').replace('"turn":1', '"turn":"one"'));
    const r = pytest([broken]);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/test_trajectories_written_by_the_typescript_harness_validate/);
    expect(r.stdout).toMatch(/line 4: turn/);
  });

  it('the committed schema is what the zod schemas generate now (npm run schemas)', () => {
    expect(readFileSync(TRAJECTORY_JSON_SCHEMA_PATH, 'utf8')).toBe(trajectoryJsonSchemaText());
    const check = spawnSync(process.execPath, ['bin/generate-schemas.ts', '--check'], { encoding: 'utf8' });
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });
});
