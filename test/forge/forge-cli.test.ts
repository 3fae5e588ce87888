import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { listCandidateRecords, listSuiteTasks } from '../../lib/forge/forge-records.ts';
import { loadSuite } from '../../lib/harness/eval/load-suite.ts';
import { startScriptedModelServer, type ScriptStep } from '../support/scripted-model-server.ts';
import { NODE_TEST_COMMAND, tsRepoFiles, writeRepo } from './support/forge-fixtures.ts';

const node = process.execPath;

/** Runs a process without blocking this one (the scripted model server answers it from here). */
function runAsync(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(node, args, { cwd: process.cwd(), env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function run(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(node, args, { cwd: process.cwd(), env: { ...process.env, ...env }, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('forge as processes: `flywheel forge run|rejections|report|recertify` and the batch entry point', () => {
  let repo: string;
  let data: string;
  beforeAll(async () => {
    repo = await writeRepo(tsRepoFiles());
    data = await mkdtemp(join(tmpdir(), 'fw-forge-cli-'));
  });
  afterAll(async () => {
    await rm(data, { recursive: true, force: true });
    await rm(repo, { recursive: true, force: true });
  });

  it('forge run certifies the candidates module’s deletions into the suite folder eval run loads; rejections lists the verdicts', async () => {
    const dataDir = join(data, 'cli');
    // The statement model: a statement for every task, and rubric scores through its submit_scores tool.
    const server = await startScriptedModelServer((request): ScriptStep => {
      const tools = (request.body['tools'] as Array<{ function: { name: string } }> | undefined) ?? [];
      if (tools.some((t) => t.function.name === 'submit_scores')) return { reply: { toolCalls: [{ name: 'submit_scores', arguments: { solvableFromVisible: 4, coherentFeature: 5, reason: 'one small function' } }] } };
      return { reply: { content: 'Some arithmetic in src/ no longer works. Make the failing tests pass again.' } };
    });
    let r: ReturnType<typeof run>;
    try {
      r = await runAsync(['bin/flywheel.ts', 'forge', 'run', '--repo', repo, '--name', 'calc', '--test-cmd', NODE_TEST_COMMAND, '--runner', 'node-test', '--max-tasks', '2', '--suite', 'cli-suite', '--split', 'held-out', '--k', '2', '--statement-model', `openai:scripted@${server.baseUrl}`, '--data-dir', dataDir]);
    } finally {
      await server.close();
    }
    expect(r.stderr).toMatch(/baseline: 2 run\(s\), 5 tests, 5 stable/);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/2 task\(s\) certified/);
    const tasks = await loadSuite(join(dataDir, 'forge', 'suites', 'cli-suite'));
    expect(tasks).toHaveLength(2);
    for (const t of tasks) {
      expect(t.task.split).toBe('held-out');
      expect(['function-body', 'class', 'function-group', 'file']).toContain((t.task.metadata.forge as { strategy: string }).strategy);
      expect(t.task.failToPass.length).toBeGreaterThan(0);
      expect(t.task.instruction).toBe('Some arithmetic in src/ no longer works. Make the failing tests pass again.');
      expect((t.task.metadata.forge as { quality: unknown }).quality).toMatchObject({ score: { solvableFromVisible: 4, coherentFeature: 5 } });
    }
    const rej = run(['bin/flywheel.ts', 'forge', 'rejections', '--all', '--data-dir', dataDir]);
    expect(rej.code).toBe(0);
    expect(rej.stdout.match(/^\S+\s+(?:function-body|class|function-group|file)\s+certified\s*$/gm)).toHaveLength(2);
    // Refused by the ranking without a run (one-liners such as `shout`'s body), each with its reason.
    expect(rej.stdout).toMatch(/^body-src-strings\.ts-shout-\S+\s+function-body\s+rejected:one-liner\s+removes 1 statement/m);
    // The report: tried candidates spread over files (the first two tried come from two files), none a one-liner.
    const report = run(['bin/flywheel.ts', 'forge', 'report', '--json', '--data-dir', dataDir]);
    expect(report.code).toBe(0);
    const spread = JSON.parse(report.stdout) as { certified: number; refused: number; spread: { byFile: Array<{ key: string }> } };
    expect(spread.certified).toBe(2);
    expect(spread.refused).toBeGreaterThan(0);
    expect(spread.spread.byFile.length).toBeGreaterThanOrEqual(2);
    const onlyRejected = run(['bin/flywheel.ts', 'forge', 'rejections', '--data-dir', dataDir]);
    expect(onlyRejected.stdout).not.toMatch(/\scertified\s/);
    const recert = run(['bin/flywheel.ts', 'forge', 'recertify', '--suite', 'cli-suite', '--k', '1', '--data-dir', dataDir]);
    expect(recert.code).toBe(0);
    expect(recert.stdout.match(/\bkept\b/g)).toHaveLength(2);
  }, 120_000);

  it('the batch entry point runs the same forge from the environment (spec blob, local ports) and writes its result', async () => {
    const dataDir = join(data, 'job');
    const ports = openLocalPorts(dataDir);
    await ports.blobs.put('forge/specs/calc.json', JSON.stringify({ name: 'calc', repo: { kind: 'local', path: repo }, testCommand: NODE_TEST_COMMAND, runner: { kind: 'node-test' }, maxTasks: 1, k: 2, suite: 'job-suite' }));
    ports.close();
    const r = run(['batch-images/forge/entrypoint.ts'], { FLYWHEEL_DATA_DIR: dataDir, FLYWHEEL_FORGE_SPEC_KEY: 'forge/specs/calc.json', FLYWHEEL_FORGE_RUN_ID: 'job-1' });
    expect(r.stderr).toContain('forge run job-1');
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout) as { tasks: string[]; counts: Record<string, number> };
    expect(summary.tasks).toHaveLength(1);
    const again = openLocalPorts(dataDir);
    try {
      expect((await listSuiteTasks(again.records, 'job-suite')).map((t) => t.taskId)).toEqual(summary.tasks);
      expect((await listCandidateRecords(again.records, 'job-1')).length).toBeGreaterThanOrEqual(1);
      expect(await again.blobs.get('forge/runs/job-1/result.json')).toBeDefined();
    } finally {
      again.close();
    }
    const missing = run(['batch-images/forge/entrypoint.ts'], { FLYWHEEL_DATA_DIR: dataDir, FLYWHEEL_FORGE_SPEC_KEY: 'forge/specs/none.json' });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/does not exist/);
  }, 120_000);
});
