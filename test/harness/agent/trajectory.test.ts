import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsBlobs } from '../../../lib/drivers/local/fs-blobs.ts';
import { runAgent, type RunAgentResult } from '../../../lib/harness/agent/run-agent.ts';
import { LimitsSchema } from '../../../lib/harness/task/task-schema.ts';
import { fromAtif, toAtif, type AtifTrajectory } from '../../../lib/harness/trajectory/atif.ts';
import { loadTrajectory, storeTrajectory, trajectoryKey } from '../../../lib/harness/trajectory/store-trajectory.ts';
import { parseJsonl, toJsonl } from '../../../lib/harness/trajectory/trajectory-schema.ts';
import { openAiCompatibleModel } from '../../../lib/models/openai-compatible.ts';
import { openPlainDirSandbox } from '../../support/plain-dir-sandbox.ts';
import { reply, startScriptedModelServer } from '../../support/scripted-model-server.ts';

let result: RunAgentResult;
let blobRoot: string;

beforeAll(async () => {
  const server = await startScriptedModelServer([
    reply.tool('nope', {}, { promptTokenIds: [1, 2], completionTokenIds: [3], logprobs: [-0.3] }),
    reply.tools(
      [
        { name: 'write_file', arguments: { path: 'fix.txt', content: 'fixed\n' } },
        { name: 'bash', arguments: { command: 'cat fix.txt' } },
      ],
      { content: 'writing the fix', promptTokenIds: [1, 2, 3, 4], completionTokenIds: [5, 6], logprobs: [-0.1, -0.2] },
    ),
    reply.tool('submit', { answer: 'done' }),
  ]);
  const sandbox = await openPlainDirSandbox({ files: { 'a.txt': 'a\n' } });
  try {
    result = await runAgent({
      attemptId: 'att-traj',
      taskId: 'task-1',
      suite: 'unit',
      instruction: 'fix it',
      model: openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'm' }),
      sandbox,
      limits: LimitsSchema.parse({}),
      policy: { checkpoint: 'ckpt-1', weightVersion: 'w3' },
    });
  } finally {
    await server.close();
    await sandbox.close();
  }
  blobRoot = await mkdtemp(join(tmpdir(), 'fw-blobs-'));
});
afterAll(async () => rm(blobRoot, { recursive: true, force: true }));

describe('trajectory', () => {
  it('is JSON Lines: a header, then steps and events in order, the outcome last; it parses back identically', () => {
    const text = toJsonl(result.trajectory);
    const lines = text.trim().split('\n').map((l) => JSON.parse(l) as { type: string; seq?: number });
    expect(lines[0]).toMatchObject({ type: 'header', format: 'flywheel.trajectory', schemaVersion: 1, attemptId: 'att-traj', taskId: 'task-1' });
    expect(lines.at(-1)!.type).toBe('outcome');
    expect(lines.slice(1).map((l) => l.seq)).toEqual(lines.slice(1).map((_, i) => i + 1));
    expect(lines.map((l) => l.type)).toEqual([
      'header', 'message', 'message', 'assistant', 'event', 'tool_result', 'assistant', 'tool_result', 'tool_result', 'assistant', 'tool_result', 'outcome',
    ]);
    expect(parseJsonl(text)).toEqual(result.trajectory);
    const outcome = result.trajectory.steps.at(-1)!;
    expect(outcome.type === 'outcome' && outcome.diff).toContain('+fixed');
  });

  it('rejects a malformed file naming the line and field', () => {
    const text = toJsonl(result.trajectory).replace('"turn":1', '"turn":"one"');
    expect(() => parseJsonl(text)).toThrow(/line 4\.turn/);
  });

  it('is stored in blobs under trajectories/attempts/<attemptId>.jsonl and read back', async () => {
    const blobs = new FsBlobs(blobRoot, { fsync: false });
    const key = await storeTrajectory(blobs, result.trajectory);
    expect(key).toBe(trajectoryKey('att-traj'));
    expect(key).toBe('trajectories/attempts/att-traj.jsonl');
    expect(await loadTrajectory(blobs, key)).toEqual(result.trajectory);
  });

  it('exports ATIF with token ids, logprobs and observations, and imports it back without loss', () => {
    const atif = toAtif(result.trajectory);
    expect(atif.schema_version).toBe('ATIF-v1.4');
    expect(atif.session_id).toBe('att-traj');
    expect(atif.steps.map((s) => s.source)).toEqual(['system', 'user', 'agent', 'agent', 'agent']);
    expect(atif.steps.map((s) => s.step_id)).toEqual([1, 2, 3, 4, 5]);
    const second = atif.steps[3]!;
    expect(second.message).toBe('writing the fix');
    expect(second.tool_calls).toEqual([
      { tool_call_id: 'call_1_0', function_name: 'write_file', arguments: { path: 'fix.txt', content: 'fixed\n' } },
      { tool_call_id: 'call_1_1', function_name: 'bash', arguments: { command: 'cat fix.txt' } },
    ]);
    expect(second.observation!.results.map((r) => r.source_call_id)).toEqual(['call_1_0', 'call_1_1']);
    expect(second.observation!.results[1]!.content?.trim()).toBe('fixed');
    expect(second.metrics).toMatchObject({ prompt_token_ids: [1, 2, 3, 4], completion_token_ids: [5, 6], logprobs: [-0.1, -0.2] });
    expect(atif.final_metrics).toMatchObject({ total_prompt_tokens: 30, total_completion_tokens: 15, total_steps: 5 });
    // Through JSON, as a file would go.
    const back = fromAtif(JSON.parse(JSON.stringify(atif)) as AtifTrajectory);
    expect(back).toEqual(result.trajectory);
  });

  it('imports a foreign ATIF file (no Flywheel extras)', () => {
    const foreign: AtifTrajectory = {
      schema_version: 'ATIF-v1.4',
      session_id: 'ext-1',
      agent: { name: 'terminus', version: '2.0', model_name: 'gpt-x' },
      steps: [
        { step_id: 1, source: 'user', message: 'list files', timestamp: '2026-01-01T00:00:00Z' },
        {
          step_id: 2,
          source: 'agent',
          message: 'listing',
          tool_calls: [{ tool_call_id: 'c1', function_name: 'bash', arguments: { command: 'ls' } }],
          observation: { results: [{ source_call_id: 'c1', content: 'a.txt' }] },
          metrics: { prompt_tokens: 7, completion_tokens: 3, completion_token_ids: [1, 2, 3], logprobs: [-1, -1, -1] },
        },
      ],
    };
    const t = fromAtif(foreign);
    expect(t.header).toMatchObject({ attemptId: 'ext-1', agent: { name: 'terminus', version: '2.0' }, model: { id: 'gpt-x' } });
    expect(t.steps.map((s) => s.type)).toEqual(['message', 'assistant', 'tool_result']);
    expect(t.steps[1]).toMatchObject({ messageId: 'ext-1:s2', toolCalls: [{ id: 'c1', name: 'bash', arguments: '{"command":"ls"}' }], tokens: { completionTokenIds: [1, 2, 3] } });
    expect(t.steps[2]).toMatchObject({ toolCallId: 'c1', name: 'bash', content: 'a.txt', messageId: 'ext-1:s2' });
    expect(parseJsonl(toJsonl(t))).toEqual(t);
  });
});
