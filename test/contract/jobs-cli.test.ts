/**
 * `flywheel jobs …` as a CLI process: over a local data folder whose runner (standing in for `npm start`) runs in
 * this test process, and over AWS Batch (moto) with `--aws`.
 */
import { describe, expect, it } from 'vitest';
import { waitForJob } from '../../lib/compute/wait-for-job.ts';
import { BatchJobs } from '../../lib/drivers/aws/batch-jobs.ts';
import { LocalJobs } from '../../lib/drivers/local/local-jobs.ts';
import type { JobDescription, JobsPort } from '../../lib/ports/jobs.ts';
import { motoEndpoint } from '../support/aws-test-resources.ts';
import { MOTO_ENV } from '../support/moto-global-setup.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import { PROCESS_TEST_TIMEOUT_MS, waitFor } from '../support/wait-for.ts';
import { runCli, startRuntime } from '../e2e/runtime-process.ts';
import { createBatchTestResources } from './jobs-moto-resources.ts';

const tempDir = tempDirs('fw-jobs-cli-');

/**
 * Upper bound for a job's child processes to start, run and be reaped: a second alone, many on a busy machine. Each
 * CLI call is a node process as well (about a second of CPU), so the tests' own limits are PROCESS_TEST_TIMEOUT_MS.
 */
const JOB_TIMEOUT_MS = 60_000;

async function waitUntilRunning(jobs: JobsPort, jobId: string): Promise<void> {
  await waitFor(async () => ((await jobs.describe(jobId)).status === 'RUNNING' ? true : undefined), { what: `job ${jobId} to be RUNNING`, timeoutMs: JOB_TIMEOUT_MS });
}

const DEFINITIONS = {
  lines: { command: ['node', '-e', 'for (let i = 0; i < 3; i++) console.log("child " + process.env.AWS_BATCH_JOB_ARRAY_INDEX + " line " + i)'] },
  // Runs until cancelled or requeued (the tests do one or the other), however slowly the machine gets there.
  sleep: { command: ['node', '-e', 'setTimeout(() => {}, 600000)'] },
};

describe('flywheel jobs (local data folder)', () => {
  it('submits, lists, describes, prints logs and cancels', async () => {
    const dataDir = tempDir();
    const runner = new LocalJobs({ dataDir, definitions: DEFINITIONS, pollMs: 50, killGraceMs: 500 });
    const env = { FLYWHEEL_DATA_DIR: dataDir, FLYWHEEL_LOCAL_JOB_DEFINITIONS: JSON.stringify(DEFINITIONS), FLYWHEEL_GPU_JOB_QUEUE: '' };
    try {
      const submittedAt = Date.now();
      const submitted = await runCli(['jobs', 'submit', '--name', 'cli-lines', '--definition', 'lines', '--category', 'data-and-reward', '--pool', 'cpu', '--array-size', '2'], env);
      const jobId = submitted.stdout.trim();
      expect(jobId).toMatch(/^[0-9a-f-]{36}$/);
      expect((await waitForJob(runner, jobId, { pollMs: 50, timeoutMs: JOB_TIMEOUT_MS })).status).toBe('SUCCEEDED');

      const listed = JSON.parse((await runCli(['jobs', 'list', '--json', '--category', 'data-and-reward'], env)).stdout) as JobDescription[];
      expect(listed.map((j) => [j.jobId, j.name, j.status, j.arraySize])).toEqual([[jobId, 'cli-lines', 'SUCCEEDED', 2]]);
      const tableOut = (await runCli(['jobs', 'list'], env)).stdout;
      expect(tableOut).toMatch(new RegExp(`${jobId}\\s+cli-lines\\s+lines\\s+data-and-reward\\s+cpu\\s+SUCCEEDED\\s+2: succeeded 2`));

      const described = (await runCli(['jobs', 'describe', jobId], env)).stdout;
      expect(described).toMatch(/status\s+SUCCEEDED/);
      expect(described).toMatch(/array\s+2: succeeded 2/);
      expect(described).toMatch(/\n1\s+SUCCEEDED\s+0/);

      const logs = (await runCli(['jobs', 'logs', jobId, '--index', '1'], env)).stdout.trim().split('\n');
      expect(logs.map((l) => l.replace(/^\S+\s+/, ''))).toEqual(['child 1 line 0', 'child 1 line 1', 'child 1 line 2']);
      // The line's time is when it was written, after the submission (not "the last minute": a busy machine is slow).
      expect(new Date(logs[0]!.split(/\s+/)[0]!).getTime()).toBeGreaterThanOrEqual(submittedAt);
      await expect(runCli(['jobs', 'logs', jobId], env)).rejects.toMatchObject({ stderr: expect.stringContaining('is an array job: pass arrayIndex') });
      await expect(runCli(['jobs', 'list', '--status', 'DONE'], env)).rejects.toMatchObject({ stderr: expect.stringContaining('--status must be one of') });

      const sleeping = (await runCli(['jobs', 'submit', '--name', 'cli-sleep', '--definition', 'sleep', '--category', 'research', '--pool', 'cpu'], env)).stdout.trim();
      await waitUntilRunning(runner, sleeping);
      expect((await runCli(['jobs', 'cancel', sleeping, '--reason', 'not needed'], env)).stdout).toContain(`cancel requested: ${sleeping}`);
      expect(await waitForJob(runner, sleeping, { pollMs: 50, timeoutMs: JOB_TIMEOUT_MS })).toMatchObject({ status: 'FAILED', statusReason: 'not needed' });
    } finally {
      await runner.close();
    }
  }, PROCESS_TEST_TIMEOUT_MS);
});

describe('npm start runs the jobs of its data folder', () => {
  it('runs a job submitted with the CLI, and requeues the one it was running when stopped', async () => {
    const dataDir = tempDir();
    const env = { FLYWHEEL_LOCAL_JOB_DEFINITIONS: JSON.stringify(DEFINITIONS) };
    const runtime = await startRuntime({ dataDir, env });
    const reader = new LocalJobs({ dataDir, run: false, definitions: DEFINITIONS });
    try {
      const jobId = (await runCli(['jobs', 'submit', '--name', 'rt-lines', '--definition', 'lines', '--category', 'evaluation', '--pool', 'gpu', '--array-size', '2', '--data-dir', dataDir], env)).stdout.trim();
      expect((await waitForJob(reader, jobId, { pollMs: 50, timeoutMs: JOB_TIMEOUT_MS })).status).toBe('SUCCEEDED');
      const sleeping = (await runCli(['jobs', 'submit', '--name', 'rt-sleep', '--definition', 'sleep', '--category', 'research', '--pool', 'cpu', '--data-dir', dataDir], env)).stdout.trim();
      await waitUntilRunning(reader, sleeping);
      expect(await runtime.stop('SIGTERM')).toBe(0);
      expect(await reader.describe(sleeping)).toMatchObject({ status: 'RUNNABLE', statusReason: 'requeued: the runtime stopped' });
    } finally {
      await reader.close();
      await runtime.stop('SIGKILL');
    }
  }, PROCESS_TEST_TIMEOUT_MS);
});

describe('flywheel jobs --aws (moto)', () => {
  it('lists and describes Batch jobs of the configured queues', async () => {
    const r = await createBatchTestResources();
    const jobs = new BatchJobs(r.batch, r.logs, { queues: r.queues, definitions: r.definitions });
    const { jobId } = await jobs.submit({ name: 'aws-cli', definition: 'other', category: 'inference', pool: 'gpu', arraySize: 2 });
    const env = {
      ...MOTO_ENV,
      FLYWHEEL_GPU_JOB_QUEUE: r.queues.gpu,
      FLYWHEEL_CPU_JOB_QUEUE: r.queues.cpu,
      FLYWHEEL_JOB_DEFINITIONS: JSON.stringify(r.definitions),
    };
    const listed = JSON.parse((await runCli(['jobs', 'list', '--aws', '--endpoint-url', motoEndpoint(), '--region', 'us-east-1', '--category', 'inference', '--json'], env)).stdout) as JobDescription[];
    expect(listed.map((j) => [j.jobId, j.name, j.definition, j.pool, j.arraySize])).toEqual([[jobId, 'aws-cli', 'other', 'gpu', 2]]);
    const described = JSON.parse((await runCli(['jobs', 'describe', jobId, '--endpoint-url', motoEndpoint(), '--region', 'us-east-1', '--json'], env)).stdout) as JobDescription & { children: unknown[] };
    expect(described).toMatchObject({ jobId, category: 'inference', status: 'SUCCEEDED' });
    expect(described.children).toEqual([
      { index: 0, status: 'SUCCEEDED' },
      { index: 1, status: 'SUCCEEDED' },
    ]);
  }, PROCESS_TEST_TIMEOUT_MS);
});
