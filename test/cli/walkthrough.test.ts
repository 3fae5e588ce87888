/**
 * The walk-through of `examples/README.md`, end to end with the real CLI (`node bin/flywheel.ts …` as child
 * processes) against a real local runtime on a temp data folder: the scripted model served by `flywheel model
 * serve-scripted`, the example suite registered, a checkpoint registered (its answer names the sweep it started),
 * `sweep status --watch` until the sweep ends, then `results` and `checkpoint show|list`. Along the way: `--version`,
 * the banner's `--data-dir`, errors that name flags, and `feedback send --comment`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointSweepId } from '../../lib/sweeps/workflow/start-sweep-from-trigger.ts';
import { REPO_ROOT, runCli, startRuntime, type RuntimeProcess } from '../e2e/runtime-process.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import { PROCESS_TEST_TIMEOUT_MS, waitFor } from '../support/wait-for.ts';

const tempDir = tempDirs('flywheel-walkthrough-');
const README = readFileSync(join(REPO_ROOT, 'examples', 'README.md'), 'utf8');
const WALKTHROUGH = README.slice(README.indexOf('## Walk-through'));

let dataDir: string;
let rt: RuntimeProcess;
let model: ChildProcess;
let modelUrl: string;

/** Runs the CLI on the walk-through's data folder; a non-zero exit comes back as its code and output, not a throw. */
async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    return { code: 0, ...(await runCli([...args, '--data-dir', dataDir], { FLYWHEEL_API_URL: '' })) };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

beforeAll(async () => {
  dataDir = join(tempDir(), 'data');
  rt = await startRuntime({ dataDir, env: { FLYWHEEL_SCHEDULE: 'off' } });
  model = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'flywheel.ts'), 'model', 'serve-scripted', '--script', 'examples/quickstart/script.json', '--port', '0'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  model.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  model.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  modelUrl = await waitFor(() => /listening on (http:\/\/\S+\/v1)/.exec(out)?.[1], { what: () => `the scripted model to listen:\n${out}` });
}, 120_000);

afterAll(async () => {
  model?.kill('SIGTERM');
  expect(await rt?.stop('SIGTERM')).toBe(0);
});

describe('the examples/README.md walk-through', () => {
  it('registers the example suite and a scripted checkpoint, watches its sweep to the end, and reads the results', { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
    // The banner's commands reach this runtime: they carry its data folder.
    expect(rt.output()).toContain(`npm run flywheel -- feedback list --data-dir ${dataDir}`);
    expect((await runCli(['--version'])).stdout.trim()).toBe(JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).version);

    expect(WALKTHROUGH).toContain('flywheel suite register -f examples/quickstart/suite.json');
    const suite = await cli(['suite', 'register', '-f', 'examples/quickstart/suite.json']);
    expect(suite.stdout).toContain('registered quickstart v1: 2 task(s), public, active');

    expect(WALKTHROUGH).toContain('flywheel checkpoint register scripted-1 --model scripted --serve openai:scripted@http://127.0.0.1:8321/v1');
    const registered = await cli(['checkpoint', 'register', 'scripted-1', '--model', 'scripted', '--serve', `openai:scripted@${modelUrl}`]);
    expect(registered.code, registered.stderr).toBe(0);
    const sweepId = checkpointSweepId('scripted-1');
    expect(registered.stdout).toBe(
      `registered scripted-1 (model scripted)\nsweep ${sweepId} started on 1 suite(s): quickstart\nfollow it: flywheel sweep status ${sweepId} --watch --data-dir ${dataDir}\n`,
    );
    expect(WALKTHROUGH).toContain(`sweep ${sweepId} started on 1 suite(s): quickstart`);

    expect(WALKTHROUGH).toContain(`flywheel sweep status ${sweepId} --watch`);
    const watched = await cli(['sweep', 'status', sweepId, '--watch']);
    expect(watched.code, `${watched.stdout}\n${watched.stderr}\n${rt.output().slice(-4000)}`).toBe(0);
    // Not a terminal: plain lines, one per shard change, ending with each shard done and the sweep's end.
    expect(watched.stdout).toMatch(/^c0-s0-strict-0 scripted-1 quickstart strict: succeeded 2\/2/m);
    expect(watched.stdout).toMatch(/^c0-s0-lenient-0 scripted-1 quickstart lenient: succeeded 2\/2/m);
    expect(watched.stdout).toContain(`sweep ${sweepId} succeeded`);
    expect(watched.stdout).not.toMatch(/[{}]/);

    expect(WALKTHROUGH).toContain('flywheel results');
    const results = await cli(['results']);
    const row = results.stdout.split('\n').find((l) => l.startsWith('scripted-1 '));
    // add is fixed, mul is not: 1 of 2 tasks in each mode, with its 95% interval.
    expect(row).toMatch(/^scripted-1\s+quickstart\s+50\.0% \[\d+\.\d–\d+\.\d\]\s+50\.0% \[\d+\.\d–\d+\.\d\]\s+2\/2\s+checkpoint-scripted-1-/);
    expect(WALKTHROUGH).toContain('50.0%');

    const status = await cli(['sweep', 'status', sweepId]);
    expect(status.stdout).toMatch(/c0-s0-strict-0\s+scripted-1\s+quickstart\s+strict\s+succeeded\s+#+ 2\/2\s+\d+s/);

    expect(WALKTHROUGH).toContain('flywheel checkpoint show scripted-1');
    const shown = await cli(['checkpoint', 'show', 'scripted-1']);
    expect(shown.stdout).toMatch(/^serving\s+openai:scripted@http/m);
    expect(shown.stdout).toMatch(/^scripted-1\s+quickstart\s+50\.0%/m);
    const listed = await cli(['checkpoint', 'list']);
    expect(listed.stdout).toMatch(/^scripted-1\s+scripted\s+.*active/m);
    const json = JSON.parse((await cli(['checkpoint', 'show', 'scripted-1', '--json'])).stdout) as { id: string; status: string };
    expect(json).toMatchObject({ id: 'scripted-1', status: 'active' });
    const missing = await cli(['checkpoint', 'show', 'nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('Flywheel.NotFoundError: No checkpoint nope');

    // A checkpoint registered again names the same sweep, which runs once.
    const again = await cli(['checkpoint', 'register', 'scripted-1', '--model', 'scripted', '--serve', `openai:scripted@${modelUrl}`]);
    expect(again.stdout).toContain(`scripted-1 is already registered with these fields: nothing changed\nsweep ${sweepId} runs on 1 suite(s)`);
  });

  it('names flags in errors, and stores a comment sent with feedback send --comment', async () => {
    const bad = await cli(['sweep', 'start', '--suite', 'nope']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('Flywheel.ValidationError: Invalid sweep:\n  --suite: no suite nope is registered\n');
    const zero = await cli(['sweep', 'start', '--attempts', '0']);
    expect(zero.stderr).toContain('  --attempts: Too small');
    expect(zero.stderr).not.toContain('attemptsPerTask');
    const badServe = await cli(['checkpoint', 'register', 'ck-bad', '--model', 'm', '--serve', 'not-a-spec']);
    expect(badServe.stderr).toContain('--serve: openai:<model>@<http(s) base URL> or bedrock:<modelId>');
    const noModel = await cli(['feedback', 'send', '--comment', 'x']);
    expect(noModel.stderr).toContain('--model: required');

    const sent = await cli(['feedback', 'send', '--comment', 'the mul fix is wrong:\nit raises instead of multiplying', '--model', 'scripted-1', '--event-id', 'walk-c1']);
    expect(sent.stdout).toBe('accepted 1, duplicates 0, rejected 0 (event walk-c1)\n');
    const stored = await waitFor(async () => {
      const r = await fetch(`${rt.url}/v1/feedback/walk-c1`, { headers: { 'x-api-key': rt.apiKey } });
      return r.status === 200 ? ((await r.json()) as { kind: string; comment: string; traceId: string }) : undefined;
    }, { what: 'the comment to be stored' });
    expect(stored).toMatchObject({ kind: 'comment', comment: 'the mul fix is wrong:\nit raises instead of multiplying', traceId: 'cli-walk-c1' });
    const listed = await cli(['feedback', 'list', '--model', 'scripted-1']);
    // The comment keeps its two lines inside its cell.
    const lines = listed.stdout.split('\n');
    const at = lines.findIndex((l) => l.startsWith('walk-c1 '));
    expect(lines[at]).toMatch(/the mul fix is wrong:$/);
    expect(lines[at + 1]).toMatch(/^\s+it raises instead of multiplying$/);
  });
});
