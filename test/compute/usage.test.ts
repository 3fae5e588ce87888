/**
 * Compute accounting over the real local drivers: Batch job state change events (the EventBridge shape) become job
 * usage, GPU-hours, CPU-hours and money exact for known durations at the price table's prices; duplicates and
 * out-of-order events change nothing; a job across midnight splits by day; an array's children carry its usage; a
 * budget crossing raises exactly one notice per threshold; the SQS consumer reports a malformed record alone; the API
 * names every bad field; the CLI's table rounds and totals.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatBudgets, formatUsage } from '../../lib/cli/compute.ts';
import { makeJobEventsHandler } from '../../lib/compute/consumers/job-events-consumer.ts';
import { COMPUTE_PRICES } from '../../lib/compute/prices.ts';
import type { ComputeUsageAnswer } from '../../lib/compute/schemas.ts';
import { jobStateChangeFromBatchEvent } from '../../lib/compute/usage/job-state-change.ts';
import { listJobs } from '../../lib/compute/usage/list-jobs.ts';
import { recordJobStateChange } from '../../lib/compute/usage/record-job-state-change.ts';
import { listNotices } from '../../lib/people/notices/notice-store.ts';
import { DEFAULT_PRICES } from '../../lib/sweeps/estimate-sweep-cost.ts';
import { openHarness, sqsRecord, type Harness } from '../support/lambda-events.ts';

let h: Harness;
beforeEach(() => {
  h = openHarness(); // the clock stands at 2026-12-02T10:00:00Z
});
afterEach(() => h.close());

const at = (iso: string) => Date.parse(iso);
const QUEUE = 'arn:aws:batch:us-east-1:123456789012:job-queue/flywheel-dev-gpu';

interface JobFacts {
  jobId: string;
  status: string;
  category?: string;
  name?: string;
  startedAt?: string;
  stoppedAt?: string;
  gpus?: number;
  vcpus?: number;
  environment?: Record<string, string>;
  array?: { size?: number; index?: number };
  attempts?: Array<{ startedAt: string; stoppedAt: string }>;
}

/** An EventBridge `Batch Job State Change` event as AWS sends it (detail: the DescribeJobs job). */
function batchEvent(f: JobFacts): Record<string, unknown> {
  return {
    version: '0',
    id: `ev-${f.jobId}-${f.status}`,
    'detail-type': 'Batch Job State Change',
    source: 'aws.batch',
    account: '123456789012',
    time: '2026-12-02T09:00:00Z',
    region: 'us-east-1',
    resources: [`arn:aws:batch:us-east-1:123456789012:job/${f.jobId}`],
    detail: {
      jobArn: `arn:aws:batch:us-east-1:123456789012:job/${f.jobId}`,
      jobName: f.name ?? `job-${f.jobId}`,
      jobId: f.jobId,
      jobQueue: QUEUE,
      status: f.status,
      ...(f.category ? { shareIdentifier: f.category } : {}),
      schedulingPriority: 0,
      attempts: (f.attempts ?? []).map((a) => ({ container: { exitCode: 0 }, startedAt: at(a.startedAt), stoppedAt: at(a.stoppedAt), statusReason: 'Essential container in task exited' })),
      statusReason: '',
      createdAt: at('2026-12-01T00:00:00Z'),
      ...(f.startedAt ? { startedAt: at(f.startedAt) } : {}),
      ...(f.stoppedAt ? { stoppedAt: at(f.stoppedAt) } : {}),
      dependsOn: [],
      jobDefinition: 'arn:aws:batch:us-east-1:123456789012:job-definition/flywheel-dev-rollout:3',
      parameters: {},
      ...(f.array ? { arrayProperties: f.array } : {}),
      container: {
        image: '123456789012.dkr.ecr.us-east-1.amazonaws.com/rollout:latest',
        command: ['node', 'entrypoint.ts'],
        volumes: [],
        environment: Object.entries(f.environment ?? {}).map(([name, value]) => ({ name, value })),
        mountPoints: [],
        ulimits: [],
        resourceRequirements: [
          ...(f.gpus ? [{ type: 'GPU', value: String(f.gpus) }] : []),
          { type: 'VCPU', value: String(f.vcpus ?? 1) },
          { type: 'MEMORY', value: '30720' },
        ],
      },
      tags: { 'resourceArn': `arn:aws:batch:us-east-1:123456789012:job/${f.jobId}` },
      propagateTags: false,
      platformCapabilities: ['EC2'],
    },
  };
}

const record = (f: JobFacts) => recordJobStateChange(h.ports, jobStateChangeFromBatchEvent(batchEvent(f)));
const usage = async (query: Record<string, string> = {}) => {
  const r = await h.request('GET', '/v1/compute/usage', { query });
  expect(r.status).toBe(200);
  return r.json as ComputeUsageAnswer;
};

/** A GPU training job of 2 h (8 vCPU, 1 GPU) and a CPU evaluation job of 30 min (4 vCPU), each through its states. */
async function twoJobs(): Promise<void> {
  const train = { jobId: 'j-train', category: 'training', gpus: 1, vcpus: 8, environment: { FLYWHEEL_TRAIN_RUN_ID: 'run-7' } };
  await record({ ...train, status: 'RUNNABLE' });
  await record({ ...train, status: 'RUNNING', startedAt: '2026-12-01T10:00:00Z' });
  await record({ ...train, status: 'SUCCEEDED', startedAt: '2026-12-01T10:00:00Z', stoppedAt: '2026-12-01T12:00:00Z' });
  const grade = { jobId: 'j-grade', category: 'evaluation', vcpus: 4, environment: { FLYWHEEL_SWEEP_ID: 'sweep-1' } };
  await record({ ...grade, status: 'RUNNABLE' });
  await record({ ...grade, status: 'FAILED', startedAt: '2026-12-01T13:00:00Z', stoppedAt: '2026-12-01T13:30:00Z' });
}

describe('compute usage from job state changes', () => {
  it('shares one price table with the sweep cost model', () => {
    expect(DEFAULT_PRICES.gpuInstanceHour).toBe(COMPUTE_PRICES.gpuInstanceHourUsd);
    expect(DEFAULT_PRICES.gpuInstanceType).toBe(COMPUTE_PRICES.gpuInstanceType);
  });

  it('turns events into GPU-hours, CPU-hours and money exact for known durations and prices', async () => {
    await twoJobs();
    const byCategory = await usage();
    expect(byCategory.from).toBe('2026-12-01');
    expect(byCategory.to).toBe('2026-12-02');
    const training = byCategory.rows.find((r) => r.category === 'training')!;
    expect(training.gpuHours).toBeCloseTo(2, 12);
    expect(training.cpuHours).toBeCloseTo(16, 12);
    expect(training.costUsd).toBeCloseTo(2 * 0.9776, 12);
    expect(training.jobs).toBe(1);
    const evaluation = byCategory.rows.find((r) => r.category === 'evaluation')!;
    expect(evaluation.gpuHours).toBe(0);
    expect(evaluation.cpuHours).toBeCloseTo(2, 12);
    expect(evaluation.costUsd).toBeCloseTo(2 * (0.08925 / 2), 12);

    const byRun = await usage({ groupBy: 'run' });
    expect(byRun.rows.map((r) => [r.category, r.runId])).toEqual([
      ['evaluation', 'sweep-1'],
      ['training', 'run-7'],
    ]);

    const jobs = await h.request('GET', '/v1/jobs');
    expect(jobs.status).toBe(200);
    expect(jobs.json.jobs.map((j: any) => [j.jobId, j.status, j.category, j.runId, j.gpus, j.vcpus])).toEqual(
      expect.arrayContaining([
        ['j-train', 'SUCCEEDED', 'training', 'run-7', 1, 8],
        ['j-grade', 'FAILED', 'evaluation', 'sweep-1', 0, 4],
      ]),
    );
    expect(jobs.json.jobs.find((j: any) => j.jobId === 'j-train').costUsd).toBeCloseTo(1.9552, 12);
    const failed = await h.request('GET', '/v1/jobs', { query: { status: 'FAILED' } });
    expect(failed.json.jobs.map((j: any) => j.jobId)).toEqual(['j-grade']);
    const ofRun = await h.request('GET', '/v1/jobs', { query: { run: 'run-7' } });
    expect(ofRun.json.jobs.map((j: any) => j.jobId)).toEqual(['j-train']);
  });

  it('ignores duplicates and ends right when events arrive out of order', async () => {
    await twoJobs();
    const before = await usage();
    const again = await record({ jobId: 'j-train', category: 'training', gpus: 1, vcpus: 8, status: 'SUCCEEDED', startedAt: '2026-12-01T10:00:00Z', stoppedAt: '2026-12-01T12:00:00Z' });
    expect(again.duplicate).toBe(true);
    expect(await usage()).toEqual(before);

    // SUCCEEDED first, then the RUNNING and RUNNABLE that were late: it stays SUCCEEDED with the same hours.
    const late = { jobId: 'j-late', category: 'training', gpus: 1, vcpus: 8 };
    await record({ ...late, status: 'SUCCEEDED', startedAt: '2026-12-02T01:00:00Z', stoppedAt: '2026-12-02T02:00:00Z' });
    const running = await record({ ...late, status: 'RUNNING', startedAt: '2026-12-02T01:00:00Z' });
    expect(running.duplicate).toBe(false);
    expect(running.job.status).toBe('SUCCEEDED');
    await record({ ...late, status: 'RUNNABLE' });
    const job = (await h.request('GET', '/v1/jobs', { query: { category: 'training' } })).json.jobs.find((j: any) => j.jobId === 'j-late');
    expect(job).toMatchObject({ status: 'SUCCEEDED', startedAt: at('2026-12-02T01:00:00Z'), stoppedAt: at('2026-12-02T02:00:00Z') });
    const training = (await usage()).rows.find((r) => r.category === 'training')!;
    expect(training.gpuHours).toBeCloseTo(3, 12);
    expect(training.jobs).toBe(2);
  });

  it('counts a running job up to now, splits a job across midnight by day, and counts an array by its children', async () => {
    await record({ jobId: 'j-night', category: 'research', vcpus: 2, status: 'SUCCEEDED', startedAt: '2026-12-01T23:00:00Z', stoppedAt: '2026-12-02T01:00:00Z' });
    await record({ jobId: 'j-now', category: 'inference', gpus: 2, vcpus: 16, status: 'RUNNING', startedAt: '2026-12-02T09:00:00Z' });
    const parent = { jobId: 'arr', category: 'evaluation', gpus: 1, vcpus: 8, environment: { FLYWHEEL_SWEEP_ID: 'sweep-2' } };
    await record({ ...parent, status: 'RUNNING', startedAt: '2026-12-02T03:00:00Z', array: { size: 2 } });
    // The children's events carry no share identifier: they take the parent's category and run.
    for (const index of [0, 1]) {
      await record({ jobId: `arr:${index}`, gpus: 1, vcpus: 8, status: 'SUCCEEDED', array: { index }, startedAt: '2026-12-02T03:00:00Z', stoppedAt: '2026-12-02T03:30:00Z', attempts: [{ startedAt: '2026-12-02T03:00:00Z', stoppedAt: '2026-12-02T03:30:00Z' }] });
    }
    await record({ ...parent, status: 'SUCCEEDED', startedAt: '2026-12-02T03:00:00Z', stoppedAt: '2026-12-02T03:30:00Z', array: { size: 2 } });

    const byDay = await usage({ groupBy: 'day' });
    const row = (category: string, day: string) => byDay.rows.find((r) => r.category === category && r.day === day);
    expect(row('research', '2026-12-01')!.cpuHours).toBeCloseTo(2, 12);
    expect(row('research', '2026-12-02')!.cpuHours).toBeCloseTo(2, 12);
    expect(row('inference', '2026-12-02')!.gpuHours).toBeCloseTo(2, 12); // 1 h so far × 2 GPUs
    expect(row('evaluation', '2026-12-02')).toMatchObject({ jobs: 2 });
    expect(row('evaluation', '2026-12-02')!.gpuHours).toBeCloseTo(1, 12);
    const byRun = await usage({ groupBy: 'run' });
    expect(byRun.rows.find((r) => r.runId === 'sweep-2')!.costUsd).toBeCloseTo(0.9776, 12);

    h.clock.now = new Date('2026-12-02T11:00:00Z');
    expect((await usage()).rows.find((r) => r.category === 'inference')!.gpuHours).toBeCloseTo(4, 12);
  });

  it('raises exactly one notice per budget threshold crossed', async () => {
    const set = await h.request('POST', '/v1/compute/budgets', { body: { category: 'training', limitUsd: 2 } });
    expect(set.status).toBe(200);
    expect(set.json.budget).toMatchObject({ scope: 'category', key: 'training', limitUsd: 2, period: 'month' });
    expect((await h.request('POST', '/v1/compute/budgets', { body: { runId: 'run-7', limitUsd: 1 } })).status).toBe(200);

    await twoJobs(); // training: $1.9552 of $2 (97.8%: the 80% warning); run-7 over its $1 (both thresholds)
    // Replays, and another event of the same job, tell nothing again.
    await record({ jobId: 'j-train', category: 'training', gpus: 1, vcpus: 8, status: 'SUCCEEDED', startedAt: '2026-12-01T10:00:00Z', stoppedAt: '2026-12-01T12:00:00Z' });
    await record({ jobId: 'j-train', category: 'training', gpus: 1, vcpus: 8, status: 'STARTING' });
    let notices = (await listNotices(h.ports.records, { kind: 'budget' })).notices;
    expect(notices.map((n) => [n.dedupKey, n.severity, n.occurrences]).sort()).toEqual([
      ['budget:category:training:2026-12:80', 'warning', 1],
      ['budget:run:run-7:lifetime:100', 'alert', 1],
      ['budget:run:run-7:lifetime:80', 'warning', 1],
    ]);

    // A second training job takes the category past 100%: one alert more, and nothing else.
    await record({ jobId: 'j-train-2', category: 'training', gpus: 1, vcpus: 8, status: 'SUCCEEDED', startedAt: '2026-12-02T08:00:00Z', stoppedAt: '2026-12-02T08:30:00Z' });
    await record({ jobId: 'j-train-3', category: 'training', gpus: 1, vcpus: 8, status: 'SUCCEEDED', startedAt: '2026-12-02T08:30:00Z', stoppedAt: '2026-12-02T09:00:00Z' });
    notices = (await listNotices(h.ports.records, { kind: 'budget' })).notices;
    expect(notices.filter((n) => n.dedupKey.startsWith('budget:category:training:2026-12:')).map((n) => [n.dedupKey, n.severity, n.occurrences]).sort()).toEqual([
      ['budget:category:training:2026-12:100', 'alert', 1],
      ['budget:category:training:2026-12:80', 'warning', 1],
    ]);
    expect(notices).toHaveLength(4);
    expect(notices.find((n) => n.dedupKey.endsWith(':2026-12:100'))!.title).toContain('crossed 100% of its $2.00 budget in 2026-12');

    const budgets = (await h.request('GET', '/v1/compute/budgets')).json.budgets as Array<Record<string, any>>;
    const training = budgets.find((b) => b.key === 'training')!;
    expect(training.crossed).toBe(true);
    expect(training.spentUsd).toBeCloseTo(2.9328, 12);
    expect((await usage()).budgets.map((b) => [b.scope, b.key, b.crossed])).toEqual([
      ['category', 'training', true],
      ['run', 'run-7', true],
    ]);
  });
});

describe('the AWS consumer', () => {
  it('records SQS messages of EventBridge events and reports only the malformed one', async () => {
    const handler = makeJobEventsHandler(h.ports);
    const good = batchEvent({ jobId: 'j-sqs', category: 'data-and-reward', vcpus: 2, status: 'SUCCEEDED', startedAt: '2026-12-01T00:00:00Z', stoppedAt: '2026-12-01T03:00:00Z' });
    const bad = { ...batchEvent({ jobId: 'j-bad', category: 'training', status: 'DONE' }) };
    const answer = await handler({ Records: [sqsRecord('m1', JSON.stringify(good)), sqsRecord('m2', JSON.stringify(bad)), sqsRecord('m3', JSON.stringify(good))] });
    expect(answer.batchItemFailures).toEqual([{ itemIdentifier: 'm2' }]);
    const row = (await usage({ from: '2026-12-01', to: '2026-12-01' })).rows;
    expect(row).toEqual([{ category: 'data-and-reward', gpuHours: 0, cpuHours: 6, costUsd: expect.closeTo(6 * 0.044625, 12), jobs: 1 }]);
  });
});

describe('the API and the CLI', () => {
  it('names every bad field', async () => {
    const paths = (r: { json: any }) => (r.json.issues as Array<{ path: string }>).map((i) => i.path).sort();
    const q = await h.request('GET', '/v1/compute/usage', { query: { from: '2026-13-01', groupBy: 'week', extra: '1' } });
    expect(q.status).toBe(400);
    expect(paths(q)).toEqual(expect.arrayContaining(['from', 'groupBy']));
    const order = await h.request('GET', '/v1/compute/usage', { query: { from: '2026-12-05', to: '2026-12-01' } });
    expect(order.status).toBe(400);
    expect(paths(order)).toEqual(['from']);
    const jobs = await h.request('GET', '/v1/jobs', { query: { status: 'DONE', limit: '0' } });
    expect(jobs.status).toBe(400);
    expect(paths(jobs)).toEqual(['limit', 'status']);
    const neither = await h.request('POST', '/v1/compute/budgets', { body: { limitUsd: 5 } });
    expect(neither.status).toBe(400);
    expect(paths(neither)).toEqual(['category', 'runId']);
    const both = await h.request('POST', '/v1/compute/budgets', { body: { category: 'gpu', limitUsd: -1 } });
    expect(both.status).toBe(400);
    expect(paths(both)).toEqual(['category', 'limitUsd']);
  });

  it('fails on a malformed stored job record naming the record and the field', async () => {
    await twoJobs();
    const stored = await h.ports.records.get('COMPUTEJOB#j-train', 'USAGE');
    await h.ports.records.put({ ...stored!, category: 'gpu-cluster' });
    const r = await h.request('GET', '/v1/jobs');
    expect(r.status).toBe(500);
    await expect(listJobs(h.ports.records)).rejects.toThrow(/^compute job record COMPUTEJOB#j-train \/ USAGE: field "category"/);
  });

  it('prints usage as a table with rounded numbers and totals', async () => {
    await twoJobs();
    await h.request('POST', '/v1/compute/budgets', { body: { category: 'training', limitUsd: 2.5 } });
    const text = formatUsage(await usage());
    expect(text).toContain('Compute usage 2026-12-01 to 2026-12-02 (UTC), by category');
    const lines = text.split('\n');
    expect(lines.find((l) => l.startsWith('evaluation'))!.split(/\s{2,}/)).toEqual(['evaluation', '0.00', '2.00', '$0.09', '1']);
    expect(lines.find((l) => l.startsWith('training'))!.split(/\s{2,}/)).toEqual(['training', '2.00', '16.00', '$1.96', '1']);
    expect(lines.find((l) => l.startsWith('total'))!.split(/\s{2,}/)).toEqual(['total', '2.00', '18.00', '$2.04', '2']);
    expect(lines.find((l) => l.startsWith('category training'))!.split(/\s{2,}/)).toEqual(['category training', '2026-12', '$2.50', '$1.96', '78%', 'ok']);
    expect(text).not.toMatch(/[{}]/);
    expect(formatBudgets([])).toContain('flywheel compute budget set');
  });
});
