/**
 * The training loop end to end on one machine (`flywheel start` as a child process, real HTTP, real Python):
 *
 * 1. A scripted policy (the scripted model server, answering with exact token ids and log-probs in the tiny model's
 *    byte-level vocabulary: its chat template rendered to bytes and specials) is registered as a checkpoint and swept
 *    over a one-task suite (`calc/add`, graded by tests). In each attempt it first calls a tool that does not exist
 *    (`run_tests`: a `tool.unknown` event, the decision a teacher's hint fixes), then reads, edits and submits; one
 *    attempt fixes the bug, the other does not, so the group has a reward spread.
 * 2. `POST /v1/decisions/extract` turns those events into decision records; `POST /v1/training-runs` trains the
 *    in-code tiny model (`tiny:0`) on the sweep: the workflow builds the dataset (Parquet shards), runs the policy job
 *    (`python3 -m flywheel_trainer policy-job`, a local job), registers the checkpoint with its lineage, and the
 *    `checkpoint.registered` trigger sweeps it, served by the trainer's OpenAI-compatible server standing in for vLLM.
 *    The random tiny model fails the task, but as attempts (never infrastructure errors) whose trajectories carry the
 *    token ids it sampled; the run ends `succeeded` with its comparison against the scripted incumbent.
 *
 * Then the checkpoint's lineage (`GET /v1/checkpoints`), the dataset manifest and its shard (read by pyarrow), the
 * curves (`GET /v1/training-runs/{id}/curves`) and `flywheel train status`.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAttemptRecords } from '../../lib/harness/attempt/read-attempt-records.ts';
import type { AttemptRecord } from '../../lib/harness/attempt/attempt-record.ts';
import { loadTrajectory } from '../../lib/harness/trajectory/store-trajectory.ts';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { sweepKeys } from '../../lib/sweeps/record-keys.ts';
import { DatasetManifestSchema, SHARD_COLUMNS, type DatasetManifest } from '../../lib/training/schemas.ts';
import { BUG_LINE, makeCalcSuite } from '../harness/eval/calc-suite.ts';
import { runCli, startRuntime, type RuntimeProcess } from './runtime-process.ts';
import { openJobsTarget } from '../../lib/cli/jobs.ts';
import { startScriptedModelServer, type RecordedRequest, type ScriptStep, type ScriptedModelServer } from '../support/scripted-model-server.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import { waitFor } from '../support/wait-for.ts';

const PYTHON = process.env['FLYWHEEL_PYTHON'] || 'python3';
const SUITE = 'calc-train';
const POLICY = 'scripted-policy';
const RUN_ID = `e2e-train-${Date.now()}`;
const STEPS = 3;

// ---------------------------------------------------------------------------------------------------------------
// The scripted policy: the tiny model's chat template (batch-images/trainer/flywheel_trainer/policy/tiny.py) rendered
// to ids, bytes 0..255 and the specials after them, so every id is one the tiny model has.
// ---------------------------------------------------------------------------------------------------------------

const SPECIAL = { system: 259, user: 260, assistant: 261, tool: 262, end: 263 } as const;
const VOCAB_SIZE = 264;
const bytes = (text: string) => [...Buffer.from(text, 'utf8')];

interface WireMessage {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ function: { name: string; arguments: string } }>;
}

function renderCall(name: string, args: string): number[] {
  return bytes(`<tool_call>{"name": ${JSON.stringify(name)}, "arguments": ${args}}</tool_call>`);
}

/** The prompt's ids, as the tiny tokenizer's `apply_chat_template(…, add_generation_prompt=True)` lays them out. */
function promptIds(body: Record<string, unknown>): number[] {
  const ids: number[] = [];
  const tools = (body['tools'] as unknown[] | undefined) ?? [];
  if (tools.length > 0) ids.push(SPECIAL.system, ...bytes('Tools:'), ...tools.flatMap((t) => bytes(`\n${JSON.stringify(t)}`)), SPECIAL.end);
  for (const m of (body['messages'] as WireMessage[]) ?? []) {
    ids.push(SPECIAL[m.role as keyof typeof SPECIAL] ?? SPECIAL.user, ...(typeof m.content === 'string' ? bytes(m.content) : []));
    for (const c of m.tool_calls ?? []) ids.push(...renderCall(c.function.name, c.function.arguments));
    ids.push(SPECIAL.end);
  }
  ids.push(SPECIAL.assistant);
  return ids;
}

let edits = 0;
/** One tool call as the policy's reply: the completion's ids (the call, then `<|end|>`) and a log-prob for each. */
function call(body: Record<string, unknown>, name: string, args: Record<string, unknown>): ScriptStep {
  const argText = JSON.stringify(args);
  const completion = [...renderCall(name, argText), SPECIAL.end];
  const prompt = promptIds(body);
  return {
    reply: {
      toolCalls: [{ name, arguments: argText }],
      promptTokenIds: prompt,
      completionTokenIds: completion,
      logprobs: completion.map((_, i) => -0.05 - (i % 7) * 0.01),
      usage: { prompt_tokens: prompt.length, completion_tokens: completion.length },
    },
  };
}

/** The scripted policy, turn by turn: a tool that does not exist, then read, edit (right the first time only), submit. */
function policy(request: RecordedRequest): ScriptStep {
  const body = request.body;
  if (body['model'] !== POLICY) return { error: { status: 400, body: { error: { message: `no script for model ${String(body['model'])}` } } } };
  const turn = ((body['messages'] as WireMessage[]) ?? []).filter((m) => m.role === 'assistant').length;
  if (turn === 0) return call(body, 'run_tests', {});
  if (turn === 1) return call(body, 'read_file', { path: 'calc.py' });
  if (turn === 2) {
    edits++;
    return call(body, 'edit', { path: 'calc.py', oldString: BUG_LINE, newString: edits === 1 ? 'return a + b' : 'return a * b' });
  }
  return call(body, 'submit', { answer: 'done' });
}

// ---------------------------------------------------------------------------------------------------------------

const tempDir = tempDirs('flywheel-training-loop-');
let root: string;
let dataDir: string;
let rt: RuntimeProcess;
let models: ScriptedModelServer;
let ports: LocalPorts | undefined;

beforeAll(async () => {
  root = tempDir();
  dataDir = join(root, 'data');
  // A one-task suite graded by tests, on a repository of this machine (a folder suite: registered on the data folder),
  // its task pointing at the repository by absolute path so the rollout job finds it from any folder.
  const calc = makeCalcSuite(root, {
    suite: SUITE,
    split: 'train',
    visibility: 'public',
    // The scripted policy needs its four turns; the random tiny model then stops at the turn or the time limit.
    limits: { turns: 4, wallClockSeconds: 60, commandSeconds: 30 },
  });
  writeFileSync(join(calc.suiteDir, 'calc.json'), JSON.stringify({ ...calc.task, repo: { kind: 'git', url: calc.repoDir, commit: calc.base } }, null, 2));
  const suiteFile = join(root, 'suite.json');
  writeFileSync(suiteFile, JSON.stringify({ id: SUITE, visibility: 'public', owner: 'training', tasks: { kind: 'folder', path: calc.suiteDir }, taskIds: ['calc/add'] }));

  models = await startScriptedModelServer(policy);
  rt = await startRuntime({ dataDir, env: { FLYWHEEL_SCHEDULE: 'off', FLYWHEEL_PYTHON: PYTHON, PYTHONDONTWRITEBYTECODE: '1' } });
  const registered = await runCli(['suite', 'register', '--file', suiteFile, '--data-dir', dataDir], { FLYWHEEL_API_URL: '' });
  expect(registered.stdout).toContain(`registered ${SUITE} v1`);
  ports = openLocalPorts(dataDir);
}, 120_000);

afterAll(async () => {
  ports?.close();
  expect(await rt?.stop('SIGTERM')).toBe(0);
  await models?.close();
});

/** The log lines of every failed job (each failed child of an array job): what a failed shard says went wrong. */
async function failedJobLogs(): Promise<string> {
  const { jobs, close } = openJobsTarget({ dataDir });
  try {
    const out: string[] = [];
    for (const job of await jobs.list({ status: 'FAILED' })) {
      const children = job.arraySize && job.arraySize > 1 ? (await jobs.children(job.jobId)).filter((c) => c.status === 'FAILED') : [{ index: undefined, statusReason: job.statusReason }];
      for (const child of children) {
        const logs = await jobs.logs(job.jobId, { ...(child.index !== undefined ? { arrayIndex: child.index } : {}), limit: 400 });
        out.push(`${job.name}[${child.index ?? '-'}] ${child.statusReason ?? ''}\n${logs.lines.map((l) => l.message).join('\n')}`);
      }
    }
    return out.join('\n---\n');
  } finally {
    await close();
  }
}

const api = async (path: string, init: { method?: string; body?: unknown } = {}) => {
  const res = await fetch(`${rt.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { 'x-api-key': rt.apiKey, 'content-type': 'application/json' },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, json: (text ? JSON.parse(text) : undefined) as any };
};

const tail = () => rt.output().slice(-6000);

/** Waits until the sweep's record (or its execution) ended. */
async function sweepEnded(sweepId: string, timeoutMs: number) {
  return waitFor(
    async () => {
      const r = await api(`/v1/sweeps/${encodeURIComponent(sweepId)}`);
      const status = r.json?.sweep?.status as string | undefined;
      const ended = r.json?.execution?.status && r.json.execution.status !== 'RUNNING';
      return status === 'succeeded' || status === 'partial' || status === 'failed' || ended ? r.json : undefined;
    },
    { what: () => `sweep ${sweepId} to end:\n${tail()}`, timeoutMs, everyMs: 500 },
  );
}

/** The attempts a sweep's shards of one checkpoint × suite × mode recorded (one shard, one array child here). */
async function sweepAttempts(sweepId: string, checkpoint: string, mode: 'strict' | 'lenient'): Promise<{ runId: string; attempts: AttemptRecord[] }> {
  const runId = `${sweepKeys.shardRunId(sweepId, checkpoint, SUITE, mode, 0)}.shard-0`;
  return { runId, attempts: await listAttemptRecords(ports!.records, runId) };
}

describe('scripted rollouts → decisions → dataset → tiny model trained → checkpoint registered, served and swept', () => {
  it('turns the whole loop on one machine over HTTP', { timeout: 900_000 }, async () => {
    // 1. The scripted policy, swept: two attempts with exact token ids, each with a call to a tool that does not exist.
    const policyCkpt = await api('/v1/checkpoints', { method: 'POST', body: { id: POLICY, model: 'tiny', serving: { kind: 'endpoint', model: `openai:${POLICY}@${models.baseUrl}` }, sweep: false } });
    expect(policyCkpt.status, JSON.stringify(policyCkpt.json)).toBeLessThan(300);
    const sweepId = `rollouts-${Date.now()}`;
    const started = await api('/v1/sweeps', { method: 'POST', body: { sweepId, checkpoints: [POLICY], suites: [SUITE], modes: ['strict'], attemptsPerTask: 2 } });
    expect(started.status, JSON.stringify(started.json)).toBe(202);
    const rollouts = await sweepEnded(sweepId, 300_000);
    expect(rollouts.sweep.status, JSON.stringify(rollouts)).toBe('succeeded');
    expect(rollouts.results).toEqual([expect.objectContaining({ checkpoint: POLICY, suite: SUITE, mode: 'strict', score: 0.5 })]);
    const { runId: rolloutRun, attempts: scripted } = await sweepAttempts(sweepId, POLICY, 'strict');
    expect(scripted.map((a) => a.status).sort()).toEqual(['failed', 'passed']);
    const completionTokens = new Map<string, number>();
    for (const a of scripted) {
      const t = await loadTrajectory(ports!.blobs, a.trajectoryKey!);
      expect(t.steps.some((s) => s.type === 'event' && s.kind === 'tool.unknown')).toBe(true);
      const turns = t.steps.filter((s) => s.type === 'assistant');
      expect(turns).toHaveLength(4);
      completionTokens.set(a.attemptId, turns.reduce((n, turn) => n + turn.usage.completionTokens, 0));
      for (const turn of turns) expect(turn.tokens?.completionTokenIds?.every((id) => id < VOCAB_SIZE)).toBe(true);
    }

    // 2. Decision records from the harness's events: one `available-tools` hint per attempt.
    const extracted = await api('/v1/decisions/extract', { method: 'POST', body: { runId: rolloutRun, sources: ['harness-event'] } });
    expect(extracted.status, JSON.stringify(extracted.json)).toBe(200);
    expect(extracted.json).toMatchObject({ created: 2, byStatus: { usable: 2, rejected: 0 } });
    const decisionIds = [...(extracted.json.decisionIds as string[])].sort();
    const listed = await api(`/v1/decisions?run=${encodeURIComponent(rolloutRun)}`);
    expect((listed.json.items as Array<{ hintClass: string; hint: { text: string } }>).map((d) => d.hintClass)).toEqual(['available-tools', 'available-tools']);
    expect((listed.json.items as Array<{ hint: { text: string } }>)[0]!.hint.text).toContain('There is no tool named "run_tests"');

    // 3. A training run of the tiny model on that sweep.
    const run = await api('/v1/training-runs', {
      method: 'POST',
      body: { runId: RUN_ID, base: 'tiny:0', dataset: { sweeps: [sweepId] }, trainer: { steps: STEPS, batchSize: 2, learningRate: 1e-3, saveEvery: STEPS } },
    });
    expect(run.status, JSON.stringify(run.json)).toBe(201);
    expect(run.json.run).toMatchObject({ runId: RUN_ID, status: 'queued' });

    const seen = new Set<string>();
    const ended = await waitFor(
      async () => {
        const r = await api(`/v1/training-runs/${RUN_ID}`);
        if (r.status !== 200) return undefined;
        seen.add(r.json.status as string);
        return ['succeeded', 'failed', 'stopped'].includes(r.json.status as string) ? r.json : undefined;
      },
      { what: () => `training run ${RUN_ID} to end (states seen: ${[...seen].join(', ')}):\n${tail()}`, timeoutMs: 600_000, everyMs: 1000 },
    );
    expect(ended.status, JSON.stringify(ended, null, 2)).toBe('succeeded');
    expect(ended).toMatchObject({ datasetId: expect.any(String), datasetKey: expect.any(String), checkpointId: expect.any(String), sweepId: expect.any(String), step: STEPS });

    // The dataset: Parquet shards of the two rollouts, one row each (the turns' ids merged), spans at the decisions.
    const manifestBytes = await ports!.blobs.get(ended.datasetKey as string);
    expect(manifestBytes).toBeDefined();
    const manifest: DatasetManifest = DatasetManifestSchema.parse(JSON.parse(Buffer.from(manifestBytes!).toString('utf8')));
    expect(manifest).toMatchObject({ datasetId: ended.datasetId, format: 'flywheel.training-shards/1', rows: 2, tokenRows: 2, textOnlyRows: 0, decisionSpans: 2 });
    expect([...manifest.decisions].sort()).toEqual(decisionIds);
    expect(manifest.sources.map((s) => s.consent)).toEqual(['harness', 'harness']);
    expect(manifest.shards.length).toBeGreaterThan(0);
    const shardPath = join(dataDir, 'blobs', manifest.shards[0]!.key);
    const shard = JSON.parse(
      execFileSync(
        PYTHON,
        [
          '-c',
          'import json, sys, pyarrow.parquet as pq; print(json.dumps(pq.read_table(sys.argv[1], columns=sys.argv[2:]).to_pylist()))',
          shardPath,
          SHARD_COLUMNS.attemptId,
          SHARD_COLUMNS.groupId,
          SHARD_COLUMNS.inputIds,
          SHARD_COLUMNS.lossMask,
          SHARD_COLUMNS.reward,
          SHARD_COLUMNS.spanStarts,
        ],
        { encoding: 'utf8' },
      ),
    ) as Array<Record<string, any>>;
    expect(shard).toHaveLength(2);
    // One group (the task's attempts in one run), with a reward spread: one fixed the bug, the other did not.
    expect(new Set(shard.map((r) => r[SHARD_COLUMNS.groupId])).size).toBe(1);
    expect(new Set(shard.map((r) => r[SHARD_COLUMNS.reward])).size).toBe(2);
    for (const row of shard) {
      const ids = row[SHARD_COLUMNS.inputIds] as number[];
      const mask = row[SHARD_COLUMNS.lossMask] as number[];
      expect(ids.every((id) => id >= 0 && id < VOCAB_SIZE)).toBe(true);
      expect(mask).toHaveLength(ids.length);
      // The loss is on the policy's own tokens only: its four completions, exactly as sampled.
      expect(mask.reduce((a, b) => a + b, 0)).toBe(completionTokens.get(row[SHARD_COLUMNS.attemptId] as string));
      expect(row[SHARD_COLUMNS.spanStarts]).toHaveLength(1);
    }

    // The checkpoint, registered with its lineage.
    const checkpoints = await api('/v1/checkpoints?model=tiny');
    const trained = (checkpoints.json.items as Array<Record<string, any>>).find((c) => c.id === ended.checkpointId);
    expect(trained, JSON.stringify(checkpoints.json)).toBeDefined();
    expect(trained).toMatchObject({ model: 'tiny', trainingRun: RUN_ID, artifactKey: ended.artifactKey, serving: { kind: 'vllm' }, status: 'active' });
    const lineage = trained!.metadata.lineage as Record<string, any>;
    expect(lineage).toMatchObject({ trainingRun: RUN_ID, base: 'tiny:0', datasetId: ended.datasetId, datasetKey: ended.datasetKey, decisionCount: 2, codeVersion: expect.any(String), rewardSpecs: expect.any(Object) });
    // The steps it trained: the trainer's last metrics line counts them (1…STEPS).
    expect(lineage.steps).toBe(STEPS);
    expect([...(lineage.decisions as string[])].sort()).toEqual(decisionIds);
    expect(await ports!.blobs.get(`${ended.artifactKey as string}/model.safetensors`)).toBeDefined();

    // Its sweep: the trainer's server stood in for vLLM; the random model fails, as attempts with its own token ids.
    const evaluated = await api(`/v1/sweeps/${encodeURIComponent(ended.sweepId as string)}`);
    if (evaluated.json.sweep.status !== 'succeeded') expect.fail(`sweep ${evaluated.json.sweep.status}: ${JSON.stringify(evaluated.json.failedShards)}\n${await failedJobLogs()}`);
    const ownAttempts: AttemptRecord[] = [];
    for (const mode of evaluated.json.sweep.modes as Array<'strict' | 'lenient'>) ownAttempts.push(...(await sweepAttempts(ended.sweepId as string, ended.checkpointId as string, mode)).attempts);
    expect(ownAttempts.length).toBeGreaterThan(0);
    for (const attempt of ownAttempts) {
      expect(attempt.status, JSON.stringify(attempt.stopReason)).not.toBe('infrastructure-error');
      const t = await loadTrajectory(ports!.blobs, attempt.trajectoryKey!);
      expect(t.header.policy?.checkpoint).toBe(ended.checkpointId);
      const turns = t.steps.filter((s) => s.type === 'assistant');
      expect(turns.length).toBeGreaterThan(0);
      for (const turn of turns) {
        expect(turn.model).toBe(trained!.serving.servedModelName);
        expect(turn.tokens?.completionTokenIds?.length).toBe(turn.usage.completionTokens);
        expect(turn.tokens?.completionTokenIds?.every((id) => id < VOCAB_SIZE)).toBe(true);
        expect(turn.tokens?.logprobs).toHaveLength(turn.usage.completionTokens);
      }
    }
    // None of its requests reached the scripted server: it was served by the stand-in.
    expect(models.chatRequests().every((r) => r.body['model'] === POLICY)).toBe(true);
    expect(ended.comparison).toMatchObject({ sweepId: ended.sweepId, better: false });
    expect((ended.comparison.rows as Array<{ incumbent: string | null; mode: string }>).find((r) => r.mode === 'strict')?.incumbent).toBe(POLICY);

    // The curves: one metrics line per step.
    const curves = await api(`/v1/training-runs/${RUN_ID}/curves`);
    expect(curves.status).toBe(200);
    // `step` counts the optimiser steps done (the trainer's convention): 1…STEPS.
    expect((curves.json.lines as Array<{ step: number; loss: number }>).map((l) => l.step)).toEqual(Array.from({ length: STEPS }, (_, i) => i + 1));
    // Both rows in every batch, each with its decision span: the decision-point term was on, beside the outcome term.
    for (const line of curves.json.lines as Array<Record<string, unknown>>) {
      expect(line).toMatchObject({ loss: expect.any(Number), outcome: expect.any(Number), decision: expect.any(Number), rows: 2, spans: 2, spanKl: expect.any(Number) });
    }

    // `flywheel train status` prints the run.
    const status = await runCli(['train', 'status', RUN_ID, '--data-dir', dataDir], { FLYWHEEL_API_URL: '' });
    expect(status.stdout).toContain(`training run ${RUN_ID}`);
    expect(status.stdout).toMatch(/status\s+succeeded/);
    expect(status.stdout).toContain(ended.checkpointId as string);
    const table = await runCli(['train', 'status', '--data-dir', dataDir], { FLYWHEEL_API_URL: '' });
    expect(table.stdout).toContain(RUN_ID);
  });
});
