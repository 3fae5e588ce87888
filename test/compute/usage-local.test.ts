/**
 * The local path of compute accounting: the local runtime runs a job (a real child process of the local jobs
 * driver, submitted from another process's view of the data folder as the CLI does) and its usage appears in
 * `GET /v1/compute/usage` and `GET /v1/jobs` over real HTTP, with the run its environment names.
 */
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../lib/cli/program.ts';
import { LocalJobs } from '../../lib/drivers/local/local-jobs.ts';
import { setEnvFor, useLocalRuntime } from '../judges/support/http-runtime.ts';
import { waitFor } from '../support/wait-for.ts';

const { start, cleanups } = useLocalRuntime('flywheel-compute-usage-local-');

/** Runs `flywheel <args>` in this process against the runtime of `dataDir`; what it printed, and the exit code it set. */
async function cli(dataDir: string, args: string[]): Promise<{ out: string; err: string; exitCode: number }> {
  let out = '';
  let err = '';
  const write = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };
  process.stdout.write = ((chunk: string) => ((out += chunk), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string) => ((err += chunk), true)) as typeof process.stderr.write;
  process.exitCode = 0;
  try {
    await buildProgram().exitOverride().parseAsync(['node', 'flywheel', ...args, '--data-dir', dataDir]);
  } finally {
    process.stdout.write = write.out;
    process.stderr.write = write.err;
  }
  const exitCode = Number(process.exitCode ?? 0);
  process.exitCode = 0;
  return { out, err, exitCode };
}

const DEFINITIONS = { tick: { command: ['node', '-e', 'setTimeout(() => {}, 200)'] } };

describe('compute usage of the local runtime', () => {
  it('accounts a local job that ran: its usage appears in GET /v1/compute/usage', async () => {
    setEnvFor(cleanups, 'FLYWHEEL_LOCAL_JOB_DEFINITIONS', JSON.stringify(DEFINITIONS));
    const { dataDir, call } = await start();
    const submitter = new LocalJobs({ dataDir, definitions: DEFINITIONS, run: false });
    cleanups.push(() => submitter.close());
    const { jobId } = await submitter.submit({ name: 'train-tick', definition: 'tick', category: 'training', pool: 'gpu', environment: { FLYWHEEL_TRAIN_RUN_ID: 'run-local-1' } });
    const { jobId: arrayId } = await submitter.submit({ name: 'grade-tick', definition: 'tick', category: 'evaluation', pool: 'cpu', arraySize: 2, environment: { FLYWHEEL_SWEEP_ID: 'sweep-local-1' } });

    const job = await waitFor(
      async () => {
        const r = await call('GET', `/v1/jobs?category=training`);
        const found = (r.body.jobs as Array<Record<string, any>>).find((j) => j.jobId === jobId);
        return found?.status === 'SUCCEEDED' ? found : undefined;
      },
      { what: 'the local job to be recorded SUCCEEDED', timeoutMs: 60_000 },
    );
    const described = await submitter.describe(jobId);
    expect(job).toMatchObject({ name: 'train-tick', runId: 'run-local-1', gpus: 1, vcpus: 8, startedAt: described.startedAt, stoppedAt: described.stoppedAt });
    const hours = (described.stoppedAt! - described.startedAt!) / 3_600_000;
    expect(job.costUsd).toBeCloseTo(hours * 0.9776, 12);

    const rows = await waitFor(
      async () => {
        const r = await call('GET', '/v1/compute/usage?groupBy=run');
        expect(r.status).toBe(200);
        const list = r.body.rows as Array<Record<string, any>>;
        return list.some((row) => row.runId === 'sweep-local-1' && row.jobs === 2) ? list : undefined;
      },
      { what: 'both children of the array job in the usage', timeoutMs: 60_000 },
    );
    const training = rows.find((r) => r.runId === 'run-local-1')!;
    expect(training).toMatchObject({ category: 'training', jobs: 1 });
    expect(training.gpuHours).toBeCloseTo(hours, 12);
    expect(training.cpuHours).toBeCloseTo(8 * hours, 12);
    const children = await Promise.all([0, 1].map((i) => submitter.describe(`${arrayId}:${i}`)));
    const childHours = children.reduce((a, c) => a + (c.stoppedAt! - c.startedAt!) / 3_600_000, 0);
    const evaluation = rows.find((r) => r.runId === 'sweep-local-1')!;
    expect(evaluation.category).toBe('evaluation');
    expect(evaluation.cpuHours).toBeCloseTo(childHours, 12);
    expect(evaluation.gpuHours).toBe(0);

    // The CLI over the same runtime: a table per run with a total, budgets set and listed, bad flags named.
    const table = await cli(dataDir, ['compute', 'usage', '--by', 'run']);
    expect(table.exitCode).toBe(0);
    expect(table.out).toMatch(/^category\s+run\s+GPU-hours\s+CPU-hours\s+cost\s+jobs$/m);
    expect(table.out).toMatch(/^training\s+run-local-1\s+0\.00\s+0\.00\s+\$0\.00\s+1$/m);
    expect(table.out).toMatch(/^total\s+0\.00\s+0\.00\s+\$0\.00\s+3$/m);
    const set = await cli(dataDir, ['compute', 'budget', 'set', '--category', 'training', '--usd', '250']);
    expect(set.out).toBe('Budget set: category training, $250.00 per month\n');
    const listed = await cli(dataDir, ['compute', 'budget', 'list']);
    expect(listed.out).toMatch(/^category training\s+\d{4}-\d{2}\s+\$250\.00\s+\$0\.00\s+0%\s+ok$/m);
    const bad = await cli(dataDir, ['compute', 'budget', 'set', '--category', 'gpu', '--usd', 'lots']);
    expect(bad.exitCode).toBe(1);
    expect(bad.err).toContain('  --category: ');
    expect(bad.err).toContain('  --usd: ');
    expect(bad.err).not.toContain('limitUsd');
    const by = await cli(dataDir, ['compute', 'usage', '--by', 'week']);
    expect(by.exitCode).toBe(1);
    expect(by.err).toContain('  --by: ');
  }, 120_000);
});
