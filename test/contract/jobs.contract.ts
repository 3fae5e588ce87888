/**
 * What the jobs port promises on every driver, as far as both the local driver and AWS Batch over moto can show it
 * honestly: a submission is validated (Batch's rules), described with its name, definition, category and pool,
 * reaches a terminal state that describe reports; an array job has its size, children 0…N−1 and a status summary;
 * a single job has no children; an idempotency token returns the first job; list filters by category, pool and
 * status, newest first, without array children; cancelling a finished job leaves it as it is; unknown ids throw
 * `Flywheel.JobNotFound`; an array job's log needs a child index.
 *
 * What differs, and is tested per driver: moto's Batch without Docker (`batch_simple`) marks every job SUCCEEDED
 * inside SubmitJob and runs nothing, so running, exit codes, retries, timeouts, fair share, cancelling a
 * RUNNABLE or RUNNING job and real log lines are the local driver's tests (test/contract/local-jobs.test.ts); the
 * SubmitJob wire shape (shareIdentifier, priority, retry strategy…) and reading a CloudWatch stream are the AWS
 * driver's (test/contract/batch-jobs.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { waitForJob } from '../../lib/compute/wait-for-job.ts';
import { COMPUTE_CATEGORIES, type JobsPort, type JobStatus, type JobSubmission } from '../../lib/ports/jobs.ts';
import { waitFor } from '../support/wait-for.ts';

export interface JobsUnderTest {
  jobs: JobsPort;
  /** A job definition whose job exits 0 at once. */
  definition: string;
}

const STATUSES: JobStatus[] = ['SUBMITTED', 'PENDING', 'RUNNABLE', 'STARTING', 'RUNNING', 'SUCCEEDED', 'FAILED'];

/**
 * "Newest first" is by creation time in milliseconds (Batch's `createdAt`), so a job submitted in the same millisecond
 * as the one before has no order: waits until the clock (the driver's and moto's are this machine's) is past the
 * creation time of `jobId`, so the next submission is newer.
 */
async function waitPastCreationOf(under: JobsUnderTest, jobId: string): Promise<void> {
  const { createdAt } = await under.jobs.describe(jobId);
  await waitFor(() => (Date.now() > createdAt ? true : undefined), { what: `the clock to pass the creation of job ${jobId}`, everyMs: 1 });
}

export function describeJobsContract(name: string, make: () => Promise<JobsUnderTest>): void {
  describe(`jobs contract: ${name}`, () => {
    const base = (under: JobsUnderTest, extra: Partial<JobSubmission> = {}): JobSubmission => ({
      name: 'contract-job',
      definition: under.definition,
      category: 'evaluation',
      pool: 'cpu',
      ...extra,
    });

    it('describes a submitted job and reports its end', async () => {
      const under = await make();
      const before = Date.now();
      const { jobId } = await under.jobs.submit(base(under, { name: 'single-1', environment: { FLYWHEEL_X: '1' } }));
      expect(jobId).toMatch(/\S/);
      const described = await under.jobs.describe(jobId);
      expect(described).toMatchObject({ jobId, name: 'single-1', definition: under.definition, category: 'evaluation', pool: 'cpu' });
      expect(STATUSES).toContain(described.status);
      expect(described.createdAt).toBeGreaterThanOrEqual(before - 1000);
      expect(described.arraySize).toBeUndefined();
      const done = await waitForJob(under.jobs, jobId, { pollMs: 50, timeoutMs: 20_000 });
      expect(done.status).toBe('SUCCEEDED');
      expect(done.stoppedAt).toBeGreaterThanOrEqual(done.createdAt);
      expect(await under.jobs.children(jobId)).toEqual([]);
    });

    it('runs an array job as children 0…N−1 with a status summary', async () => {
      const under = await make();
      const { jobId } = await under.jobs.submit(base(under, { name: 'array-3', arraySize: 3, category: 'training', pool: 'gpu' }));
      const described = await under.jobs.describe(jobId);
      expect(described).toMatchObject({ jobId, arraySize: 3, category: 'training', pool: 'gpu' });
      const done = await waitForJob(under.jobs, jobId, { pollMs: 50, timeoutMs: 20_000 });
      expect(done.status).toBe('SUCCEEDED');
      expect(done.arrayStatusSummary).toMatchObject({ SUCCEEDED: 3 });
      const children = await under.jobs.children(jobId);
      expect(children.map((c) => c.index)).toEqual([0, 1, 2]);
      expect(children.every((c) => c.status === 'SUCCEEDED')).toBe(true);
      await expect(under.jobs.logs(jobId)).rejects.toMatchObject({ name: 'Flywheel.ValidationError' });
    });

    it('refuses invalid submissions, naming each field', async () => {
      const under = await make();
      await expect(under.jobs.submit(base(under, { name: 'bad name!' }))).rejects.toMatchObject({ name: 'Flywheel.ValidationError', issues: [expect.objectContaining({ path: 'name' })] });
      await expect(under.jobs.submit(base(under, { definition: 'no-such-definition' }))).rejects.toMatchObject({ issues: [expect.objectContaining({ path: 'definition' })] });
      await expect(under.jobs.submit(base(under, { category: 'fun' as never, arraySize: 10_001, retries: 10 }))).rejects.toMatchObject({
        issues: [expect.objectContaining({ path: 'category' }), expect.objectContaining({ path: 'arraySize' }), expect.objectContaining({ path: 'retries' })],
      });
      await expect(under.jobs.submit(base(under, { environment: { AWS_BATCH_JOB_ID: 'x' } }))).rejects.toMatchObject({ issues: [expect.objectContaining({ path: 'environment.AWS_BATCH_JOB_ID' })] });
    });

    it('returns the first job for a repeated idempotency token', async () => {
      const under = await make();
      const token = `tok-${Math.random().toString(36).slice(2)}`;
      const first = await under.jobs.submit(base(under, { name: 'idem-1', idempotencyToken: token }));
      const again = await under.jobs.submit(base(under, { name: 'idem-2', idempotencyToken: token }));
      expect(again.jobId).toBe(first.jobId);
      expect((await under.jobs.describe(again.jobId)).name).toBe('idem-1');
      const other = await under.jobs.submit(base(under, { name: 'idem-3', idempotencyToken: `${token}-b` }));
      expect(other.jobId).not.toBe(first.jobId);
    });

    it('lists by category, pool and status, newest first, without array children', async () => {
      const under = await make();
      const a = await under.jobs.submit(base(under, { name: 'list-a', category: 'research', pool: 'cpu' }));
      await waitPastCreationOf(under, a.jobId);
      const b = await under.jobs.submit(base(under, { name: 'list-b', category: 'research', pool: 'gpu', arraySize: 2 }));
      await waitPastCreationOf(under, b.jobId);
      const c = await under.jobs.submit(base(under, { name: 'list-c', category: 'inference', pool: 'cpu' }));
      for (const { jobId } of [a, b, c]) await waitForJob(under.jobs, jobId, { pollMs: 50, timeoutMs: 20_000 });

      const research = (await under.jobs.list({ category: 'research' })).map((j) => j.jobId);
      expect(research.indexOf(b.jobId)).toBeGreaterThanOrEqual(0);
      expect(research.indexOf(a.jobId)).toBeGreaterThan(research.indexOf(b.jobId));
      expect(research).not.toContain(c.jobId);
      expect(research.some((id) => id.startsWith(`${b.jobId}:`))).toBe(false);

      const cpuResearch = (await under.jobs.list({ category: 'research', pool: 'cpu' })).map((j) => j.jobId);
      expect(cpuResearch).toContain(a.jobId);
      expect(cpuResearch).not.toContain(b.jobId);

      const succeeded = await under.jobs.list({ status: 'SUCCEEDED', pool: 'cpu' });
      expect(succeeded.map((j) => j.jobId)).toEqual(expect.arrayContaining([a.jobId, c.jobId]));
      expect(succeeded.every((j) => j.status === 'SUCCEEDED' && j.pool === 'cpu')).toBe(true);
      expect(await under.jobs.list({ status: 'RUNNING', category: 'inference', pool: 'cpu' })).not.toContainEqual(expect.objectContaining({ jobId: c.jobId }));
      for (const job of await under.jobs.list({})) expect(COMPUTE_CATEGORIES).toContain(job.category);
    });

    it('leaves a finished job as it is when cancelled', async () => {
      const under = await make();
      const { jobId } = await under.jobs.submit(base(under, { name: 'finished' }));
      await waitForJob(under.jobs, jobId, { pollMs: 50, timeoutMs: 20_000 });
      await under.jobs.cancel(jobId, 'too late');
      const after = await under.jobs.describe(jobId);
      expect(after.status).toBe('SUCCEEDED');
      expect(after.statusReason ?? '').not.toContain('too late');
    });

    it('throws Flywheel.JobNotFound for an unknown id', async () => {
      const under = await make();
      const unknown = '00000000-0000-4000-8000-000000000000';
      for (const call of [() => under.jobs.describe(unknown), () => under.jobs.children(unknown), () => under.jobs.logs(unknown), () => under.jobs.cancel(unknown, 'x')]) {
        await expect(call()).rejects.toMatchObject({ name: 'Flywheel.JobNotFound' });
      }
    });
  });
}
