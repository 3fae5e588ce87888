/**
 * A trained checkpoint served locally, the way the loop uses it:
 * - `python3 -m flywheel_trainer serve` started as vLLM's stand-in (the sidecar's own start and readiness wait),
 *   reached through the project's models driver (`createModel('openai:<name>@…/v1')`): token ids and log-probs come
 *   back as from vLLM, seeded answers repeat, a request past the context is a 400;
 * - the local jobs driver's rollout job, given a shard spec with the planner's `vllm serve` command and the
 *   checkpoint as a folder in the local blobs, starts the stand-in instead (no vLLM here), runs the attempt against
 *   it and records the trajectory with the served token ids.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startVllmSidecar, TRAINER_DIR, trainerServeCommand } from '../../batch-images/rollout/vllm-sidecar.ts';
import { waitForJob } from '../../lib/compute/wait-for-job.ts';
import { LocalJobs } from '../../lib/drivers/local/local-jobs.ts';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { loadTrajectory } from '../../lib/harness/trajectory/store-trajectory.ts';
import { createModel } from '../../lib/models/create-model.ts';
import { ModelRequestError } from '../../lib/models/model-errors.ts';
import type { ShardResult } from '../../lib/rollout/run-rollout-shard.ts';
import type { ShardSpecInput } from '../../lib/rollout/shard-spec.ts';
import { makeCalcSuite } from '../harness/eval/calc-suite.ts';
import { freePort } from '../support/free-port.ts';
import { PROCESS_TEST_TIMEOUT_MS } from '../support/wait-for.ts';

const PYTHON = process.env['FLYWHEEL_PYTHON'] || 'python3';
const BUILD = `
import sys
from flywheel_trainer.policy.tiny import build_tiny_model
from flywheel_trainer.policy.checkpoint import save_checkpoint
model, tokenizer = build_tiny_model(seed=0)
save_checkpoint(model, tokenizer, sys.argv[1], {"base": "tiny:0"})
`;

let root: string;
let checkpointDir: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'fw-serve-'));
  checkpointDir = join(root, 'checkpoint');
  execFileSync(PYTHON, ['-c', BUILD, checkpointDir], { cwd: TRAINER_DIR, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }, stdio: 'pipe' });
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('serving a checkpoint', () => {
  it('answers the models driver with token ids and log-probs, like vLLM', async () => {
    const port = await freePort();
    const lines: string[] = [];
    const server = await startVllmSidecar({
      command: trainerServeCommand({ servedModelName: 'tiny-ckpt', python: PYTHON }),
      cwd: TRAINER_DIR,
      port,
      model: 'tiny-ckpt',
      readyTimeoutMs: 120_000,
      env: { ...process.env, FLYWHEEL_CHECKPOINT_DIR: checkpointDir, PYTHONDONTWRITEBYTECODE: '1' },
      log: (line) => lines.push(line),
    });
    try {
      expect(server.baseUrl).toBe(`http://127.0.0.1:${port}/v1`);
      const model = createModel(`openai:${server.model}@${server.baseUrl}`);
      const tools = [{ name: 'list_files', description: 'List the files of a folder', parameters: { type: 'object', properties: { path: { type: 'string' } } } }];
      const ask = () => model.chat({ messages: [{ role: 'system', content: 'You fix bugs.' }, { role: 'user', content: 'list the files' }], tools, sampling: { maxTokens: 16, seed: 5, temperature: 1 } });
      const reply = await ask();
      const tokens = reply.tokens!;
      expect(tokens.promptTokenIds!.length).toBe(reply.usage.promptTokens);
      expect(tokens.promptTokenIds!.length).toBeGreaterThan(20);
      expect(tokens.completionTokenIds!.length).toBe(reply.usage.completionTokens);
      expect(tokens.completionTokenIds!.length).toBeGreaterThan(0);
      expect(tokens.completionTokenIds!.length).toBeLessThanOrEqual(16);
      expect(tokens.logprobs).toHaveLength(tokens.completionTokenIds!.length);
      for (const lp of tokens.logprobs!) expect(lp).toBeLessThanOrEqual(0);
      expect(['stop', 'length']).toContain(reply.finishReason);
      expect(reply.model).toBe('tiny-ckpt');
      // Byte-level tokenizer: the prompt's ids are the rendered template's bytes, the tools listed in it.
      const prompt = Buffer.from(tokens.promptTokenIds!.filter((id) => id < 256)).toString('utf8');
      expect(prompt).toContain('You fix bugs.');
      expect(prompt).toContain('"list_files"');
      // Seeded: the same ids again.
      expect((await ask()).tokens!.completionTokenIds).toEqual(tokens.completionTokenIds);
      // Past the context: a 400 the driver does not retry, naming the field.
      const overflow = model.chat({ messages: [{ role: 'user', content: 'hi' }], sampling: { maxTokens: 1_000_000 } });
      await expect(overflow).rejects.toBeInstanceOf(ModelRequestError);
      await expect(overflow).rejects.toThrow(/HTTP 400.*max_tokens/);
    } finally {
      await server.stop();
    }
    expect(lines.some((line) => line.includes('"message": "serving"'))).toBe(true);
  }, PROCESS_TEST_TIMEOUT_MS);

  it('the local rollout job serves a vllm checkpoint from the blobs with the stand-in', async () => {
    const dataDir = join(root, 'data');
    const ports: LocalPorts = openLocalPorts(dataDir);
    const jobs = new LocalJobs({ dataDir, pollMs: 50 });
    try {
      const calc = makeCalcSuite(root);
      await ports.blobs.put('suites/calc/tasks/add.json', JSON.stringify({ ...calc.task, id: 'calc/add', repo: { kind: 'git', url: calc.repoDir, commit: calc.base } }));
      // The checkpoint as a training run writes it: a folder of objects under its artifactKey.
      for (const file of readdirSync(checkpointDir)) await ports.blobs.put(`checkpoints/tiny-1/${file}`, readFileSync(join(checkpointDir, file)));
      const port = await freePort();
      const spec: ShardSpecInput = {
        schemaVersion: 1,
        runId: 'sweep-s.tiny-1.calc.strict',
        suite: 'calc',
        taskKeys: ['suites/calc/tasks/add.json'],
        checkpoint: 'tiny-1',
        mode: 'strict',
        attempts: 1,
        maxTries: 1,
        retryDelayMs: 10,
        outputPrefix: 'sweeps/sweep-s/shards/tiny-1/calc/strict',
        artifactKey: 'checkpoints/tiny-1/',
        // What the sweep's planner writes for a `vllm`-served checkpoint (lib/sweeps/plan-shards.ts): no vllm here.
        vllm: { command: 'vllm serve "$FLYWHEEL_CHECKPOINT_DIR" --port "$FLYWHEEL_VLLM_PORT" --served-model-name tiny-1', servedModelName: 'tiny-1', port },
      };
      await ports.blobs.put('specs/s.json', JSON.stringify(spec));
      const { jobId } = await jobs.submit({
        name: 'rollout-sweep-s',
        definition: 'rollout',
        category: 'evaluation',
        pool: 'gpu',
        timeoutSeconds: 240,
        // The stand-in takes a free port of its own unless the variable names one (the variable wins).
        environment: { FLYWHEEL_SHARD_KEY: 'specs/s.json', FLYWHEEL_PYTHON: PYTHON, FLYWHEEL_VLLM_PORT: String(port) },
      });
      const done = await waitForJob(jobs, jobId, { pollMs: 100, timeoutMs: 200_000 });
      const log = (await jobs.logs(jobId)).lines.map((l) => l.message).join('\n');
      expect(done.status, log).toBe('SUCCEEDED');
      expect(log).toContain(`starting vLLM's stand-in (the trainer's server) on port ${port}`);
      expect(log).toContain(`vLLM ready at http://127.0.0.1:${port}/v1 serving tiny-1`);
      const body = await ports.blobs.get('sweeps/sweep-s/shards/tiny-1/calc/strict/shard-0.json');
      const result = JSON.parse(new TextDecoder().decode(body!)) as ShardResult;
      expect(result.results.model).toBe(`openai:tiny-1@http://127.0.0.1:${port}/v1`);
      expect(result.results.counts['infrastructure-error']).toBe(0);
      expect(result.results.counts.passed + result.results.counts.failed + result.results.counts.ungraded).toBe(1);
      // The trajectory holds what the server sampled: the training data of the next step of the loop.
      const attempts = await ports.records.query({ partition: 'EVAL#sweep-s.tiny-1.calc.strict.shard-0', sort: { beginsWith: 'ATTEMPT#' } });
      expect(attempts.items).toHaveLength(1);
      const trajectory = await loadTrajectory(ports.blobs, String(attempts.items[0]!['trajectoryKey']));
      expect(trajectory.header.policy?.checkpoint).toBe('tiny-1');
      const turns = trajectory.steps.filter((step) => step.type === 'assistant');
      expect(turns.length).toBeGreaterThan(0);
      for (const turn of turns) {
        expect(turn.model).toBe('tiny-1');
        expect(turn.tokens?.promptTokenIds?.length).toBe(turn.usage.promptTokens);
        expect(turn.tokens?.completionTokenIds?.length).toBe(turn.usage.completionTokens);
        expect(turn.tokens?.logprobs).toHaveLength(turn.usage.completionTokens);
      }
    } finally {
      await jobs.close();
      ports.close();
    }
  }, PROCESS_TEST_TIMEOUT_MS);
});
