/**
 * The AWS Batch jobs driver against moto_server: the shared contract, then what the wire protocol shows honestly.
 *
 * moto 5.2.1 without Docker (`batch_simple`, see jobs-moto-resources.ts) accepts SubmitJob, validates the queue,
 * definition and name, stores container overrides, timeout and tags, marks the job SUCCEEDED at once and drops
 * `shareIdentifier`, `schedulingPriorityOverride` and `retryStrategy` on the floor. So: the request body as sent
 * (read from the SDK's built HTTP request) is checked for those fields, and what moto stored is checked through
 * DescribeJobs. Running, retries, timeouts and cancelling a live job cannot be observed here (no job ever runs):
 * those are the local driver's tests. CloudWatch log reading is checked by writing the job's log stream in moto.
 */
import { BatchClient, DescribeJobsCommand } from '@aws-sdk/client-batch';
import { CreateLogGroupCommand, CreateLogStreamCommand, PutLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import { beforeAll, describe, expect, it } from 'vitest';
import { BATCH_TAGS, BatchJobs, batchJobsConfigFromEnv } from '../../lib/drivers/aws/batch-jobs.ts';
import { DynamoDbRecords } from '../../lib/drivers/aws/dynamodb-records.ts';
import type { RecordsPort } from '../../lib/ports/records.ts';
import { createTestTable, motoClients } from '../support/aws-test-resources.ts';
import { createBatchTestResources, type BatchTestResources } from './jobs-moto-resources.ts';
import { describeJobsContract } from './jobs.contract.ts';
import { recordWire } from '../support/record-wire.ts';

const aws = motoClients();
let resources: Promise<BatchTestResources> | undefined;
const shared = () => (resources ??= createBatchTestResources(aws.endpoint));
let table: Promise<string> | undefined;
const records = async (): Promise<RecordsPort> => new DynamoDbRecords(aws.documents, await (table ??= createTestTable(aws)));


async function driver(options: { withRecords?: boolean } = {}) {
  const r = await shared();
  const batch = new BatchClient({ endpoint: aws.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } });
  const wire = recordWire(batch);
  const jobs = new BatchJobs(batch, r.logs, { queues: r.queues, definitions: r.definitions }, options.withRecords === false ? {} : { records: await records(), claimPollMs: 20 });
  return { jobs, wire, batch, r };
}

describeJobsContract('AWS Batch (moto, batch_simple)', async () => ({ jobs: (await driver()).jobs, definition: 'ok' }));

describe('BatchJobs over the wire', () => {
  beforeAll(async () => {
    await shared();
  });

  it('sends SubmitJob with the pool’s queue, shareIdentifier = category, priority, array, retries, timeout and overrides', async () => {
    const { jobs, wire, batch, r } = await driver();
    const { jobId } = await jobs.submit({
      name: 'eval-s1-shard',
      definition: 'ok',
      category: 'evaluation',
      pool: 'gpu',
      arraySize: 4,
      retries: 2,
      timeoutSeconds: 3600,
      schedulingPriority: 7,
      command: ['--verbose'],
      environment: { FLYWHEEL_SHARD_KEY: 'sweeps/s1/shard.json', FLYWHEEL_SHARD_COUNT: '4' },
    });
    const submit = wire.find((w) => w.operation === 'SubmitJobCommand')!.body;
    expect(submit).toEqual({
      jobName: 'eval-s1-shard',
      jobQueue: r.queues.gpu,
      jobDefinition: r.definitions['ok'],
      shareIdentifier: 'evaluation',
      schedulingPriorityOverride: 7,
      arrayProperties: { size: 4 },
      retryStrategy: { attempts: 3 },
      timeout: { attemptDurationSeconds: 3600 },
      // Batch's override replaces the command; the port appends, so the definition's command comes first.
      containerOverrides: {
        environment: [
          { name: 'FLYWHEEL_SHARD_KEY', value: 'sweeps/s1/shard.json' },
          { name: 'FLYWHEEL_SHARD_COUNT', value: '4' },
        ],
        command: [...r.commands['ok']!, '--verbose'],
      },
      tags: { [BATCH_TAGS.category]: 'evaluation', [BATCH_TAGS.pool]: 'gpu', [BATCH_TAGS.definition]: 'ok' },
      propagateTags: true,
    });
    // What moto kept of it, read back the way Step Functions and people would.
    const [stored] = (await batch.send(new DescribeJobsCommand({ jobs: [jobId] }))).jobs!;
    expect(stored!.jobQueue).toBe(r.queueArns.gpu);
    expect(stored!.timeout).toEqual({ attemptDurationSeconds: 3600 });
    expect(stored!.container!.command).toEqual([...r.commands['ok']!, '--verbose']);
    expect(stored!.container!.environment).toEqual(expect.arrayContaining([{ name: 'FLYWHEEL_SHARD_KEY', value: 'sweeps/s1/shard.json' }]));
    expect(stored!.arrayProperties!.size).toBe(4);
    expect(await jobs.describe(jobId)).toMatchObject({ jobId, definition: 'ok', category: 'evaluation', pool: 'gpu', arraySize: 4 });
    // A second submission of the same definition reads its command from the cache.
    await jobs.submit({ name: 'again', definition: 'ok', category: 'evaluation', pool: 'gpu', command: ['x'] });
    expect(wire.filter((w) => w.operation === 'DescribeJobDefinitionsCommand')).toHaveLength(1);
  });

  it('sends no command override without arguments, and refuses a timeout under Batch’s 60 s', async () => {
    const { jobs, wire } = await driver();
    await jobs.submit({ name: 'plain', definition: 'other', category: 'research', pool: 'cpu' });
    const submit = wire.find((w) => w.operation === 'SubmitJobCommand')!.body;
    expect(submit['containerOverrides']).toBeUndefined();
    expect(submit['retryStrategy']).toBeUndefined();
    expect(submit['shareIdentifier']).toBe('research');
    await expect(jobs.submit({ name: 'short', definition: 'other', category: 'research', pool: 'cpu', timeoutSeconds: 10 })).rejects.toMatchObject({ name: 'Flywheel.ValidationError', issues: [{ path: 'timeoutSeconds' }] });
  });

  it('reads the children of an array job with DescribeJobs of <parent>:<index>', async () => {
    const { jobs, wire } = await driver();
    const { jobId } = await jobs.submit({ name: 'kids', definition: 'other', category: 'training', pool: 'gpu', arraySize: 3 });
    wire.length = 0;
    const children = await jobs.children(jobId);
    expect(children).toEqual([0, 1, 2].map((index) => ({ index, status: 'SUCCEEDED' })));
    expect(wire.map((w) => w.body['jobs'])).toEqual([[jobId], [`${jobId}:0`, `${jobId}:1`, `${jobId}:2`]]);
  });

  it('submits once per idempotency token, also when two submits race', async () => {
    const { jobs, wire } = await driver();
    const token = `race-${Date.now()}`;
    const [a, b] = await Promise.all([
      jobs.submit({ name: 'race-a', definition: 'other', category: 'research', pool: 'cpu', idempotencyToken: token }),
      jobs.submit({ name: 'race-b', definition: 'other', category: 'research', pool: 'cpu', idempotencyToken: token }),
    ]);
    expect(a.jobId).toBe(b.jobId);
    const submits = wire.filter((w) => w.operation === 'SubmitJobCommand');
    expect(submits).toHaveLength(1);
    expect((submits[0]!.body['tags'] as Record<string, string>)[BATCH_TAGS.idempotencyToken]).toBe(token);
    expect(await (await records()).get(`JOBTOKEN#${token}`, 'JOB')).toMatchObject({ jobId: a.jobId });
  });

  it('takes over a claim whose submitter died before recording a job', async () => {
    const { jobs, wire } = await driver();
    const token = `stale-${Date.now()}`;
    await (await records()).put({ pk: `JOBTOKEN#${token}`, sk: 'JOB', kind: 'job-idempotency', claimId: 'dead', claimExpiresAt: Date.now() - 1 });
    const { jobId } = await jobs.submit({ name: 'takeover', definition: 'other', category: 'research', pool: 'cpu', idempotencyToken: token });
    expect(wire.filter((w) => w.operation === 'SubmitJobCommand')).toHaveLength(1);
    expect((await jobs.describe(jobId)).name).toBe('takeover');
  });

  it('refuses a token without the records port', async () => {
    const { jobs } = await driver({ withRecords: false });
    await expect(jobs.submit({ name: 'x', definition: 'other', category: 'research', pool: 'cpu', idempotencyToken: 't' })).rejects.toMatchObject({ name: 'Flywheel.ConfigurationError' });
  });

  it('reads logs from the job’s CloudWatch stream, paging with nextToken', async () => {
    const { jobs, batch, r } = await driver();
    const { jobId } = await jobs.submit({ name: 'logged', definition: 'other', category: 'research', pool: 'cpu' });
    const [job] = (await batch.send(new DescribeJobsCommand({ jobs: [jobId] }))).jobs!;
    const stream = job!.container!.logStreamName!;
    expect(stream).toMatch(/\S/);
    // No stream yet (moto ran nothing): no lines.
    expect((await jobs.logs(jobId)).lines).toEqual([]);
    await r.logs.send(new CreateLogGroupCommand({ logGroupName: '/aws/batch/job' })).catch((error: Error) => {
      if (error.name !== 'ResourceAlreadyExistsException') throw error;
    });
    await r.logs.send(new CreateLogStreamCommand({ logGroupName: '/aws/batch/job', logStreamName: stream }));
    const t0 = Date.now();
    await r.logs.send(new PutLogEventsCommand({ logGroupName: '/aws/batch/job', logStreamName: stream, logEvents: [0, 1, 2].map((i) => ({ timestamp: t0 + i, message: `line ${i}` })) }));
    const first = await jobs.logs(jobId, { limit: 2 });
    expect(first.lines).toEqual([
      { timestamp: t0, message: 'line 0' },
      { timestamp: t0 + 1, message: 'line 1' },
    ]);
    const rest = await jobs.logs(jobId, { nextToken: first.nextToken! });
    expect(rest.lines).toEqual([{ timestamp: t0 + 2, message: 'line 2' }]);
  });

  it('is configured from FLYWHEEL_GPU_JOB_QUEUE, FLYWHEEL_CPU_JOB_QUEUE and FLYWHEEL_JOB_DEFINITIONS', () => {
    expect(batchJobsConfigFromEnv({ FLYWHEEL_GPU_JOB_QUEUE: 'g', FLYWHEEL_CPU_JOB_QUEUE: 'c', FLYWHEEL_JOB_DEFINITIONS: '{"rollout":"flywheel-dev-rollout"}', FLYWHEEL_JOB_LOG_GROUP: '/fw/jobs' })).toEqual({
      queues: { gpu: 'g', cpu: 'c' },
      definitions: { rollout: 'flywheel-dev-rollout' },
      logGroup: '/fw/jobs',
    });
    expect(() => batchJobsConfigFromEnv({ FLYWHEEL_GPU_JOB_QUEUE: 'g' })).toThrow('Missing environment variables: FLYWHEEL_CPU_JOB_QUEUE, FLYWHEEL_JOB_DEFINITIONS');
    expect(() => batchJobsConfigFromEnv({ FLYWHEEL_GPU_JOB_QUEUE: 'g', FLYWHEEL_CPU_JOB_QUEUE: 'c', FLYWHEEL_JOB_DEFINITIONS: '["x"]' })).toThrow(/JSON object/);
  });
});
