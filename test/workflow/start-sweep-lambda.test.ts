/**
 * `functions/sweeps/start-sweep.ts`, the function the schedule and the `checkpoint.registered` rule invoke, against
 * moto: DynamoDB for the registry, Step Functions for the executions. A trigger delivered twice starts one execution.
 */
import { DescribeExecutionCommand, CreateStateMachineCommand, SFNClient } from '@aws-sdk/client-sfn';
import type { Context } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { registerCheckpoint } from '../../lib/registry/register-checkpoint.ts';
import { registerSuite } from '../../lib/registry/register-suite.ts';
import { checkpointSweepId } from '../../lib/sweeps/workflow/start-sweep-from-trigger.ts';
import { createTestBucket, createTestEventBus, createTestQueue, createTestTable, motoClients, uniqueName } from '../support/aws-test-resources.ts';

const context = {
  functionName: 'flywheel-start-sweep',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:flywheel-start-sweep',
  memoryLimitInMB: '512',
  awsRequestId: 'req-1',
  logGroupName: '/aws/lambda/flywheel-start-sweep',
  logStreamName: 's',
  callbackWaitsForEmptyEventLoop: true,
  getRemainingTimeInMillis: () => 10_000,
} as unknown as Context;

const aws = motoClients();
const sfn = new SFNClient({ endpoint: aws.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } });
let handler: (event: unknown, context: Context) => Promise<{ sweepId?: string; executionId?: string; skipped?: boolean }>;

beforeAll(async () => {
  const [table, bucket, queue, bus] = await Promise.all([createTestTable(aws), createTestBucket(aws), createTestQueue(aws), createTestEventBus(aws)]);
  const machine = await sfn.send(
    new CreateStateMachineCommand({
      name: uniqueName('flywheel-sweep'),
      definition: JSON.stringify({ StartAt: 'P', States: { P: { Type: 'Pass', End: true } } }),
      roleArn: 'arn:aws:iam::123456789012:role/flywheel-sfn',
    }),
  );
  Object.assign(process.env, {
    FLYWHEEL_TABLE: table,
    FLYWHEEL_BUCKET: bucket,
    FLYWHEEL_INGEST_QUEUE_URL: queue.queueUrl,
    FLYWHEEL_INGEST_DLQ_URL: queue.deadLetterUrl,
    FLYWHEEL_EVENT_BUS: bus.busName,
    FLYWHEEL_STATE_MACHINE_SWEEP: machine.stateMachineArn!,
    AWS_ENDPOINT_URL: aws.endpoint,
    POWERTOOLS_METRICS_DISABLED: 'true',
  });
  const ports = awsPortsFromEnv();
  await registerSuite(ports, { id: 'smoke', visibility: 'public', owner: 'evals', tasks: { kind: 'records' }, taskIds: ['t1', 't2'] });
  await registerCheckpoint(ports, { id: 'coder:step-10', model: 'coder', serving: { kind: 'endpoint', model: 'openai:coder@http://127.0.0.1:9/v1' }, sweep: false });
  ({ handler } = (await import('../../functions/sweeps/start-sweep.ts')) as unknown as { handler: typeof handler });
});

describe('functions/sweeps/start-sweep', () => {
  it('the schedule starts the nightly sweep, once however often it is delivered', async () => {
    const event = { trigger: 'schedule', scheduledTime: '2026-12-02T02:00:00Z' };
    const first = await handler(event, context);
    expect(first.sweepId).toBe('nightly-20261202');
    const again = await handler(event, context);
    expect(again).toEqual(first);
    const execution = await sfn.send(new DescribeExecutionCommand({ executionArn: first.executionId }));
    expect(execution.name).toBe('nightly-20261202');
    expect(JSON.parse(execution.input!)).toMatchObject({ sweepId: 'nightly-20261202', trigger: 'schedule', checkpoints: ['coder:step-10'], suites: ['smoke'] });
  });

  it('a registered checkpoint starts a sweep over it; one registered with sweep: false starts none', async () => {
    const event = { 'detail-type': 'checkpoint.registered', source: 'flywheel', detail: { checkpointId: 'coder:step-10', model: 'coder', sweep: true } };
    const started = await handler(event, context);
    expect(started.sweepId).toBe(checkpointSweepId('coder:step-10'));
    const execution = await sfn.send(new DescribeExecutionCommand({ executionArn: started.executionId }));
    expect(JSON.parse(execution.input!)).toMatchObject({ trigger: 'checkpoint', checkpoints: ['coder:step-10'] });
    expect(await handler({ ...event, detail: { ...event.detail, sweep: false } }, context)).toEqual({ skipped: true });
  });

  it('refuses an event that is no trigger', async () => {
    await expect(handler({ hello: 'world' }, context)).rejects.toMatchObject({ name: 'Flywheel.ValidationError' });
  });
});
