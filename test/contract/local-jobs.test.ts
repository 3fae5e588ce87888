/**
 * The local jobs driver: the shared contract, then what only real processes show — Batch's variables in each
 * child, appended arguments, logs with timestamps and paging, fair share by weight, the per-pool cap, retries,
 * timeouts that kill the process tree, cancels (here and from another instance, as the CLI does), the RUNNABLE
 * time limit, a restart that sees past jobs and reruns the interrupted one, and one runner per folder.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitForJob } from '../../lib/compute/wait-for-job.ts';
import { LocalJobs, type LocalJobsOptions } from '../../lib/drivers/local/local-jobs.ts';
import { localJobDefinitionsFromEnv } from '../../lib/drivers/local/jobs/job-definitions.ts';
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { isProcessAlive } from '../../lib/shared/process-liveness.ts';
import type { JobDescription } from '../../lib/ports/jobs.ts';
import { describeJobsContract } from './jobs.contract.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import { waitFor } from '../support/wait-for.ts';

const tempDir = tempDirs('fw-jobs-');
const opened: LocalJobs[] = [];
function open(options: Partial<LocalJobsOptions> & { dataDir?: string } = {}): LocalJobs {
  const jobs = new LocalJobs({ dataDir: options.dataDir ?? tempDir(), pollMs: 50, killGraceMs: 500, ...options, definitions: { ok: { command: ['node', '-e', ''] }, ...DEFS, ...options.definitions } });
  opened.push(jobs);
  return jobs;
}
afterEach(async () => {
  for (const jobs of opened.splice(0)) await jobs.close();
});

/** Entry points the tests run: `node -e <script>` with the job's arguments after it. */
const DEFS = {
  env: { command: ['node', '-e', 'console.log(JSON.stringify({ id: process.env.AWS_BATCH_JOB_ID, index: process.env.AWS_BATCH_JOB_ARRAY_INDEX ?? null, attempt: process.env.AWS_BATCH_JOB_ATTEMPT, x: process.env.FLYWHEEL_X, dataDir: process.env.FLYWHEEL_DATA_DIR, args: process.argv.slice(1) })); console.error("to stderr")', '--'] },
  append: { command: ['node', '-e', 'require("fs").appendFileSync(process.env.ORDER_FILE, process.env.FLYWHEEL_COMPUTE_CATEGORY + " " + Date.now() + "\\n"); setTimeout(() => require("fs").appendFileSync(process.env.ORDER_FILE, "end " + Date.now() + "\\n"), Number(process.env.HOLD_MS ?? 0))'] },
  sleep: { command: ['node', '-e', 'setTimeout(() => {}, Number(process.argv[1] ?? 30000))', '--'] },
  flaky: { command: ['node', '-e', 'const f = process.env.COUNTER; const n = require("fs").existsSync(f) ? Number(require("fs").readFileSync(f, "utf8")) : 0; require("fs").writeFileSync(f, String(n + 1)); process.exit(n < Number(process.env.FAILS) ? 3 : 0)'] },
  tree: { command: ['bash', '-c', 'sleep 60 & echo $! > "$PID_FILE"; wait'] },
  missing: { command: ['/no/such/entry-point'] },
  lines: { command: ['node', '-e', 'for (let i = 0; i < 5; i++) console.log("line " + i)'] },
};

const wait = (jobs: LocalJobs, jobId: string) => waitForJob(jobs, jobId, { pollMs: 30, timeoutMs: 20_000 });
/** The shared condition wait (test/support/wait-for.ts) for a boolean check; the bound stays each call's own. */
const until = (check: () => Promise<boolean> | boolean, timeoutMs = 10_000) =>
  waitFor(async () => ((await check()) ? true : undefined), { what: 'the job condition', timeoutMs, everyMs: 30 });
const statusOf = async (jobs: LocalJobs, jobId: string): Promise<JobDescription['status']> => (await jobs.describe(jobId)).status;

describeJobsContract('local child processes', async () => ({ jobs: open(), definition: 'ok' }));

describe('local jobs: processes', () => {
  it('gives every child Batch variables, appends the arguments, and logs stdout and stderr with timestamps', async () => {
    const jobs = open();
    const dataDir = jobs.dataDir;
    const before = Date.now();
    const { jobId } = await jobs.submit({ name: 'env', definition: 'env', category: 'evaluation', pool: 'gpu', arraySize: 2, command: ['--shard', 'x'], environment: { FLYWHEEL_X: 'y' } });
    expect((await wait(jobs, jobId)).status).toBe('SUCCEEDED');
    for (const index of [0, 1]) {
      const { lines } = await jobs.logs(jobId, { arrayIndex: index });
      const printed = JSON.parse(lines.find((l) => l.message.startsWith('{'))!.message);
      expect(printed).toEqual({ id: `${jobId}:${index}`, index: String(index), attempt: '1', x: 'y', dataDir, args: ['--shard', 'x'] });
      expect(lines.map((l) => l.message)).toContain('to stderr');
      expect(lines.every((l) => l.timestamp >= before && l.timestamp <= Date.now())).toBe(true);
    }
    const single = await jobs.submit({ name: 'env1', definition: 'env', category: 'evaluation', pool: 'cpu' });
    await wait(jobs, single.jobId);
    const printed = JSON.parse((await jobs.logs(single.jobId)).lines.find((l) => l.message.startsWith('{'))!.message);
    expect(printed).toMatchObject({ id: single.jobId, index: null });
    await expect(jobs.logs(single.jobId, { arrayIndex: 0 })).rejects.toMatchObject({ name: 'Flywheel.ValidationError' });
  });

  it('pages logs with nextToken and follows from the last token', async () => {
    const jobs = open();
    const { jobId } = await jobs.submit({ name: 'lines', definition: 'lines', category: 'research', pool: 'cpu' });
    await wait(jobs, jobId);
    const first = await jobs.logs(jobId, { limit: 2 });
    expect(first.lines.map((l) => l.message)).toEqual(['line 0', 'line 1']);
    const rest = await jobs.logs(jobId, { nextToken: first.nextToken!, limit: 10 });
    expect(rest.lines.map((l) => l.message)).toEqual(['line 2', 'line 3', 'line 4']);
    const none = await jobs.logs(jobId, { nextToken: rest.nextToken! });
    expect(none).toEqual({ lines: [], nextToken: rest.nextToken });
  });

  it('fails a job whose entry point cannot start, with Batch’s reason', async () => {
    const jobs = open();
    const { jobId } = await jobs.submit({ name: 'missing', definition: 'missing', category: 'research', pool: 'cpu', retries: 0 });
    const done = await wait(jobs, jobId);
    expect(done.status).toBe('FAILED');
    expect(done.statusReason).toMatch(/^CannotStartContainerError: .*ENOENT/);
  });

  it('retries a failing job until it succeeds, and fails it when the attempts run out', async () => {
    const jobs = open();
    const dir = tempDir();
    const ok = await jobs.submit({ name: 'flaky-ok', definition: 'flaky', category: 'research', pool: 'cpu', retries: 2, environment: { COUNTER: join(dir, 'a'), FAILS: '2' } });
    const done = await wait(jobs, ok.jobId);
    expect(done).toMatchObject({ status: 'SUCCEEDED', attempts: 3, exitCode: 0 });
    const bad = await jobs.submit({ name: 'flaky-bad', definition: 'flaky', category: 'research', pool: 'cpu', retries: 1, environment: { COUNTER: join(dir, 'b'), FAILS: '5' } });
    const failed = await wait(jobs, bad.jobId);
    expect(failed).toMatchObject({ status: 'FAILED', attempts: 2, exitCode: 3, statusReason: 'Essential container in task exited' });
    expect(readFileSync(join(dir, 'b'), 'utf8')).toBe('2');
  });

  it('kills the whole process tree on timeout and does not retry it', async () => {
    const jobs = open();
    const pidFile = join(tempDir(), 'pid');
    const { jobId } = await jobs.submit({ name: 'tree', definition: 'tree', category: 'research', pool: 'cpu', timeoutSeconds: 0.5, retries: 3, environment: { PID_FILE: pidFile } });
    const done = await wait(jobs, jobId);
    expect(done).toMatchObject({ status: 'FAILED', statusReason: 'Job attempt duration exceeded timeout', attempts: 1 });
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    await until(() => !isProcessAlive(grandchild), 3000);
  });
});

describe('local jobs: scheduling', () => {
  it('shares a pool’s slots by weight (stride): 3:1 gives 6 of the first 8 starts to the heavier category', async () => {
    const dir = tempDir();
    const order = join(dir, 'order');
    writeFileSync(order, '');
    const jobs = open({ maxConcurrency: { cpu: 1 }, shares: { inference: 1, training: 1, 'data-and-reward': 1, evaluation: 3, research: 1 } });
    const blocker = await jobs.submit({ name: 'blocker', definition: 'sleep', category: 'training', pool: 'cpu', command: ['400'] });
    await until(async () => (await statusOf(jobs, blocker.jobId)) === 'RUNNING');
    const env = { ORDER_FILE: order };
    for (let i = 0; i < 6; i++) await jobs.submit({ name: `r${i}`, definition: 'append', category: 'research', pool: 'cpu', environment: env });
    for (let i = 0; i < 6; i++) await jobs.submit({ name: `e${i}`, definition: 'append', category: 'evaluation', pool: 'cpu', environment: env });
    await until(async () => (await jobs.list({ pool: 'cpu' })).every((j) => j.status === 'SUCCEEDED'), 20_000);
    const starts = readFileSync(order, 'utf8').trim().split('\n').filter((l) => !l.startsWith('end')).map((l) => l.split(' ')[0]);
    expect(starts).toHaveLength(12);
    expect(starts.slice(0, 8).filter((c) => c === 'evaluation')).toHaveLength(6);
    // Research kept waiting jobs, so it was never starved: it had 2 of the first 8.
    expect(starts.slice(0, 8).filter((c) => c === 'research')).toHaveLength(2);
  });

  it('runs at most the pool’s cap at once, pools apart, children one slot each', async () => {
    const dir = tempDir();
    const order = join(dir, 'order');
    writeFileSync(order, '');
    const jobs = open({ maxConcurrency: { gpu: 2, cpu: 1 } });
    const array = await jobs.submit({ name: 'cap', definition: 'append', category: 'evaluation', pool: 'gpu', arraySize: 5, environment: { ORDER_FILE: order, HOLD_MS: '300' } });
    let maxGpu = 0;
    let parentRunningSeen = false;
    await until(async () => {
      maxGpu = Math.max(maxGpu, jobs.running().gpu);
      const parent = await jobs.describe(array.jobId);
      if (parent.status === 'RUNNING') parentRunningSeen = true;
      return parent.status === 'SUCCEEDED';
    }, 20_000);
    expect(maxGpu).toBe(2);
    expect(parentRunningSeen).toBe(true);
    // From the children's own timestamps: never more than two alive at once.
    let alive = 0;
    let most = 0;
    const events = readFileSync(order, 'utf8').trim().split('\n').map((l) => l.split(' ')).map(([kind, t]) => ({ delta: kind === 'end' ? -1 : 1, t: Number(t) }));
    for (const e of events.sort((a, b) => a.t - b.t || a.delta - b.delta)) most = Math.max(most, (alive += e.delta));
    expect(most).toBeLessThanOrEqual(2);
    expect(events.filter((e) => e.delta === 1)).toHaveLength(5);
  });

  it('runs higher scheduling priority first inside a category', async () => {
    const dir = tempDir();
    const order = join(dir, 'order');
    writeFileSync(order, '');
    const jobs = open({ maxConcurrency: { cpu: 1 } });
    const blocker = await jobs.submit({ name: 'blocker', definition: 'sleep', category: 'evaluation', pool: 'cpu', command: ['300'] });
    await until(async () => (await statusOf(jobs, blocker.jobId)) === 'RUNNING');
    const low = await jobs.submit({ name: 'low', definition: 'env', category: 'evaluation', pool: 'cpu', schedulingPriority: 1 });
    const high = await jobs.submit({ name: 'high', definition: 'env', category: 'evaluation', pool: 'cpu', schedulingPriority: 9 });
    const [l, h] = [await wait(jobs, low.jobId), await wait(jobs, high.jobId)];
    expect(h.startedAt!).toBeLessThan(l.startedAt!);
  });

  it('cancels a job left RUNNABLE past the time limit in a pool with no capacity, never one waiting its turn', async () => {
    const jobs = open({ maxConcurrency: { gpu: 0, cpu: 1 }, runnableTimeLimitSeconds: 0.3 });
    const blocker = await jobs.submit({ name: 'blocker', definition: 'sleep', category: 'evaluation', pool: 'cpu', command: ['1000'] });
    await until(async () => (await statusOf(jobs, blocker.jobId)) === 'RUNNING');
    const waiting = await jobs.submit({ name: 'waiting', definition: 'ok', category: 'research', pool: 'cpu' });
    const stuck = await jobs.submit({ name: 'stuck', definition: 'ok', category: 'research', pool: 'gpu', arraySize: 2 });
    const done = await wait(jobs, stuck.jobId);
    expect(done).toMatchObject({ status: 'FAILED', arrayStatusSummary: { FAILED: 2 } });
    expect((await jobs.children(stuck.jobId))[0]!.statusReason).toMatch(/RUNNABLE for more than 0.3 s with no capacity in its pool/);
    // The cpu job waited behind the blocker for longer than the limit, and still ran.
    expect(await wait(jobs, waiting.jobId)).toMatchObject({ status: 'SUCCEEDED', attempts: 1 });
    expect(() => open({ maxConcurrency: { cpu: -1 } })).toThrow(RangeError);
  });
});

describe('local jobs: cancel, restart, one runner', () => {
  it('cancels RUNNABLE and RUNNING jobs, the running one’s tree killed; children of an array too', async () => {
    const jobs = open({ maxConcurrency: { cpu: 1 } });
    const running = await jobs.submit({ name: 'running', definition: 'sleep', category: 'evaluation', pool: 'cpu' });
    await until(async () => (await statusOf(jobs, running.jobId)) === 'RUNNING');
    const queued = await jobs.submit({ name: 'queued', definition: 'ok', category: 'evaluation', pool: 'cpu', arraySize: 3 });
    await jobs.cancel(queued.jobId, 'sweep stopped');
    expect(await jobs.describe(queued.jobId)).toMatchObject({ status: 'FAILED', statusReason: 'sweep stopped', arrayStatusSummary: { FAILED: 3 } });
    expect((await jobs.children(queued.jobId)).map((c) => c.statusReason)).toEqual(['sweep stopped', 'sweep stopped', 'sweep stopped']);
    await jobs.cancel(running.jobId, 'operator');
    const done = await wait(jobs, running.jobId);
    expect(done).toMatchObject({ status: 'FAILED', statusReason: 'operator' });
  });

  it('a second instance without the runner (the CLI) reads, submits and cancels; the runner acts on it', async () => {
    const dataDir = tempDir();
    const runner = open({ dataDir });
    const cli = open({ dataDir, run: false });
    const { jobId } = await cli.submit({ name: 'from-cli', definition: 'sleep', category: 'research', pool: 'cpu' });
    await until(async () => (await statusOf(cli, jobId)) === 'RUNNING');
    expect(runner.running().cpu).toBe(1);
    await cli.cancel(jobId, 'from the CLI');
    const done = await waitForJob(cli, jobId, { pollMs: 30, timeoutMs: 10_000 });
    expect(done).toMatchObject({ status: 'FAILED', statusReason: 'from the CLI' });
  });

  it('after a restart sees past jobs, and reruns the job the stopped runtime was running', async () => {
    const dataDir = tempDir();
    const first = open({ dataDir });
    const done = await first.submit({ name: 'done-before', definition: 'ok', category: 'research', pool: 'cpu' });
    await wait(first, done.jobId);
    const slow = await first.submit({ name: 'slow', definition: 'sleep', category: 'research', pool: 'cpu', command: ['800'] });
    await until(async () => (await statusOf(first, slow.jobId)) === 'RUNNING');
    await first.close();
    opened.splice(opened.indexOf(first), 1);

    const reader = open({ dataDir, run: false });
    expect(await reader.describe(slow.jobId)).toMatchObject({ status: 'RUNNABLE', attempts: 0, statusReason: 'requeued: the runtime stopped' });
    const second = open({ dataDir });
    expect((await second.list({ category: 'research' })).map((j) => j.name)).toEqual(['slow', 'done-before']);
    expect(await wait(second, slow.jobId)).toMatchObject({ status: 'SUCCEEDED', attempts: 1 });
    expect((await second.describe(done.jobId)).status).toBe('SUCCEEDED');
  });

  it('refuses a second live runner on the same folder, and takes over after it dies', async () => {
    const dataDir = tempDir();
    const script = `import { LocalJobs } from ${JSON.stringify(new URL('../../lib/drivers/local/local-jobs.ts', import.meta.url).href)};
new LocalJobs({ dataDir: ${JSON.stringify(dataDir)} }); console.log('ready'); setInterval(() => {}, 1000);`;
    const other = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve, reject) => {
        other.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
        other.once('exit', (code) => reject(new Error(`runner process exited ${code}`)));
      });
      expect(() => open({ dataDir })).toThrow(/another process \(pid \d+\) runs the jobs/);
    } finally {
      other.kill('SIGKILL');
      await new Promise((r) => other.once('exit', r));
    }
    const jobs = open({ dataDir });
    const { jobId } = await jobs.submit({ name: 'after', definition: 'ok', category: 'research', pool: 'cpu' });
    expect((await wait(jobs, jobId)).status).toBe('SUCCEEDED');
  });

  it('is wired into the local ports bundle, and definitions come from FLYWHEEL_LOCAL_JOB_DEFINITIONS', async () => {
    const defs = localJobDefinitionsFromEnv({ FLYWHEEL_LOCAL_JOB_DEFINITIONS: JSON.stringify({ forge: { command: ['node', 'batch-images/forge/entrypoint.ts'] } }) });
    expect(Object.keys(defs).sort()).toEqual(['forge', 'rollout']);
    expect(defs['rollout']!.command).toEqual(['node', 'batch-images/rollout/entrypoint.ts']);
    expect(() => localJobDefinitionsFromEnv({ FLYWHEEL_LOCAL_JOB_DEFINITIONS: '{"x":{"command":[]}}' })).toThrow(/non-empty array/);
    const dataDir = tempDir();
    const ports = openLocalPorts(dataDir, { jobs: { definitions: { ok: { command: ['node', '-e', ''] } }, pollMs: 50 } });
    try {
      const { jobId } = await ports.jobs!.submit({ name: 'bundled', definition: 'ok', category: 'inference', pool: 'cpu' });
      expect((await waitForJob(ports.jobs!, jobId, { pollMs: 30, timeoutMs: 10_000 })).status).toBe('SUCCEEDED');
      expect(existsSync(join(dataDir, 'jobs.sqlite'))).toBe(true);
    } finally {
      await ports.jobs!.close();
      ports.close();
    }
    const plain = openLocalPorts(tempDir());
    expect(plain.jobs).toBeUndefined();
    plain.close();
  });
});
