/**
 * The AWS bundle and the AWS drivers' error paths, against moto: configuration from the environment (the SDK
 * honouring AWS_ENDPOINT_URL), BatchWrite retries of unprocessed items, and SendMessageBatch failures.
 */
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { DynamoDbRecords } from '../../lib/drivers/aws/dynamodb-records.ts';
import { SqsQueue } from '../../lib/drivers/aws/sqs-queue.ts';
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { createTestBucket, createTestEventBus, createTestQueue, createTestTable, motoClients } from '../support/aws-test-resources.ts';

const aws = motoClients();

describe('awsPortsFromEnv', () => {
  const saved = process.env.AWS_ENDPOINT_URL;
  afterEach(() => {
    if (saved === undefined) delete process.env.AWS_ENDPOINT_URL;
    else process.env.AWS_ENDPOINT_URL = saved;
  });

  it('names every missing variable', () => {
    expect(() => awsPortsFromEnv({ FLYWHEEL_TABLE: 't', FLYWHEEL_BUCKET: 'b' })).toThrow(
      'Missing environment variables: FLYWHEEL_INGEST_QUEUE_URL, FLYWHEEL_INGEST_DLQ_URL, FLYWHEEL_EVENT_BUS',
    );
  });

  it('builds working drivers from the environment, the SDK reading AWS_ENDPOINT_URL', async () => {
    const [table, bucket, queue, bus] = await Promise.all([createTestTable(aws), createTestBucket(aws), createTestQueue(aws), createTestEventBus(aws)]);
    process.env.AWS_ENDPOINT_URL = aws.endpoint;
    const ports = awsPortsFromEnv({
      ...process.env,
      FLYWHEEL_TABLE: table,
      FLYWHEEL_BUCKET: bucket,
      FLYWHEEL_INGEST_QUEUE_URL: queue.queueUrl,
      FLYWHEEL_INGEST_DLQ_URL: queue.deadLetterUrl,
      FLYWHEEL_EVENT_BUS: bus.busName,
    });
    await ports.records.put({ pk: 'P', sk: 'S', v: 1 });
    expect(await ports.records.get('P', 'S')).toEqual({ pk: 'P', sk: 'S', v: 1 });
    await ports.blobs.put('k', 'v');
    expect(new TextDecoder().decode(await ports.blobs.get('k'))).toBe('v');
    await ports.ingestQueue.send('m');
    expect(await ports.ingestQueue.depth()).toEqual({ visible: 1, inFlight: 0 });
    expect(await ports.ingestDeadLetters.depth()).toEqual({ visible: 0, inFlight: 0 });
    await ports.events.publish([{ type: 'feedback.stored', detail: {} }]);
    expect(ports.now()).toBeInstanceOf(Date);
  });
});

describe('DynamoDbRecords.putMany', () => {
  it('retries unprocessed items until all are written', async () => {
    const table = await createTestTable(aws);
    let calls = 0;
    // Passes half of each batch to moto and hands the rest back as UnprocessedItems, as a throttled table does.
    const throttled = {
      send: async (command: unknown) => {
        if (!(command instanceof BatchWriteCommand)) return aws.documents.send(command as never);
        calls++;
        const requests = command.input.RequestItems![table]!;
        const half = Math.ceil(requests.length / 2);
        await aws.documents.send(new BatchWriteCommand({ RequestItems: { [table]: requests.slice(0, half) } }));
        return { UnprocessedItems: requests.length > half ? { [table]: requests.slice(half) } : {} };
      },
    } as unknown as DynamoDBDocumentClient;
    const sleeps: number[] = [];
    const records = new DynamoDbRecords(throttled, table, { sleep: async (ms) => void sleeps.push(ms) });
    await records.putMany(Array.from({ length: 30 }, (_, i) => ({ pk: 'R', sk: String(i).padStart(2, '0') })));
    const stored = await new DynamoDbRecords(aws.documents, table).query({ partition: 'R' });
    expect(stored.items).toHaveLength(30);
    expect(calls).toBeGreaterThan(2);
    expect(sleeps.length).toBe(calls - 2);
  });
});

describe('SqsQueue.sendBatch', () => {
  it('sends in chunks of 10 and throws naming the entries SQS rejected', async () => {
    const { queueUrl } = await createTestQueue(aws);
    // moto never fails a batch entry of a standard queue, so this client fails every entry whose body says so,
    // sending the rest to moto, as SQS reports a partial batch failure.
    const chunkSizes: number[] = [];
    const partial = {
      send: async (command: unknown) => {
        if (!(command instanceof SendMessageBatchCommand)) return aws.sqs.send(command as never);
        const entries = command.input.Entries!;
        chunkSizes.push(entries.length);
        const good = entries.filter((entry) => entry.MessageBody !== 'reject me');
        const sent = good.length > 0 ? await aws.sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: good })) : { Successful: [] };
        return {
          Successful: sent.Successful ?? [],
          Failed: entries
            .filter((entry) => entry.MessageBody === 'reject me')
            .map((entry) => ({ Id: entry.Id, Code: 'InvalidMessageContents', SenderFault: true, Message: 'rejected' })),
        };
      },
    } as unknown as SQSClient;
    const queue = new SqsQueue(partial, queueUrl);
    const bodies = Array.from({ length: 12 }, (_, i) => (i === 4 || i === 11 ? 'reject me' : `m${i}`));
    await expect(queue.sendBatch(bodies)).rejects.toThrow('SendMessageBatch failed for 2 of 12 entries: #4: InvalidMessageContents rejected; #11: InvalidMessageContents rejected');
    expect(chunkSizes).toEqual([10, 2]);
    expect((await new SqsQueue(aws.sqs, queueUrl).depth()).visible).toBe(10);
    const ids = await queue.sendBatch(['a', 'b']);
    expect(ids).toHaveLength(2);
  });
});
