/**
 * Fresh AWS resources in the shared moto_server for one test: a table shaped like Flywheel's (pk/sk, gsi1, gsi2),
 * a bucket, a queue with a DLQ and redrive policy, an event bus with a rule that copies Flywheel events to an SQS
 * queue (so a test can read what was published). Names are unique per call, so tests never share state.
 *
 * @example
 * const aws = motoClients();
 * const table = await createTestTable(aws);
 * const records = new DynamoDbRecords(aws.documents, table);
 */
import { randomUUID } from 'node:crypto';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { CreateEventBusCommand, EventBridgeClient, PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { inject } from 'vitest';
import { EVENT_SOURCE } from '../../lib/ports/events.ts';

export interface MotoClients {
  endpoint: string;
  dynamodb: DynamoDBClient;
  documents: DynamoDBDocumentClient;
  s3: S3Client;
  sqs: SQSClient;
  eventbridge: EventBridgeClient;
}

/** The moto endpoint from the global setup (vitest `inject`, else `FLYWHEEL_TEST_MOTO_ENDPOINT`). */
export function motoEndpoint(): string {
  let endpoint: string | undefined;
  try {
    endpoint = inject('motoEndpoint');
  } catch {
    endpoint = undefined;
  }
  endpoint ??= process.env.FLYWHEEL_TEST_MOTO_ENDPOINT;
  if (!endpoint) throw new Error('No moto endpoint: run under vitest with test/support/moto-global-setup.ts');
  return endpoint;
}

export function motoClients(endpoint: string = motoEndpoint()): MotoClients {
  const config = {
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  };
  const dynamodb = new DynamoDBClient(config);
  return {
    endpoint,
    dynamodb,
    documents: DynamoDBDocumentClient.from(dynamodb, { marshallOptions: { removeUndefinedValues: true } }),
    s3: new S3Client({ ...config, forcePathStyle: true }),
    sqs: new SQSClient(config),
    eventbridge: new EventBridgeClient(config),
  };
}

/** A name no other test uses: `<prefix>-<8 hex>`. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

export async function createTestTable(aws: MotoClients, name: string = uniqueName('flywheel-table')): Promise<string> {
  const index = (n: 1 | 2) => ({
    IndexName: `gsi${n}`,
    KeySchema: [
      { AttributeName: `gsi${n}pk`, KeyType: 'HASH' as const },
      { AttributeName: `gsi${n}sk`, KeyType: 'RANGE' as const },
    ],
    Projection: { ProjectionType: 'ALL' as const },
  });
  await aws.dynamodb.send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk'].map((AttributeName) => ({
        AttributeName,
        AttributeType: 'S' as const,
      })),
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [index(1), index(2)],
    }),
  );
  return name;
}

export async function createTestBucket(aws: MotoClients, name: string = uniqueName('flywheel-bucket')): Promise<string> {
  await aws.s3.send(new CreateBucketCommand({ Bucket: name }));
  return name;
}

export interface TestQueue {
  queueUrl: string;
  queueArn: string;
  deadLetterUrl: string;
  deadLetterArn: string;
}

async function queueArn(aws: MotoClients, queueUrl: string): Promise<string> {
  const attributes = await aws.sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
  return attributes.Attributes!.QueueArn!;
}

/** A queue whose messages move to a fresh DLQ after `maxReceiveCount` receives (default 3). */
export async function createTestQueue(
  aws: MotoClients,
  options: { maxReceiveCount?: number; visibilityTimeoutSeconds?: number; name?: string } = {},
): Promise<TestQueue> {
  const name = options.name ?? uniqueName('flywheel-queue');
  const dlq = await aws.sqs.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }));
  const deadLetterUrl = dlq.QueueUrl!;
  const deadLetterArn = await queueArn(aws, deadLetterUrl);
  const queue = await aws.sqs.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: {
        VisibilityTimeout: String(options.visibilityTimeoutSeconds ?? 30),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: deadLetterArn, maxReceiveCount: options.maxReceiveCount ?? 3 }),
      },
    }),
  );
  return { queueUrl: queue.QueueUrl!, queueArn: await queueArn(aws, queue.QueueUrl!), deadLetterUrl, deadLetterArn };
}

export interface TestEventBus {
  busName: string;
  /** Every event with source `flywheel` on the bus is delivered here (an EventBridge rule with an SQS target). */
  targetQueueUrl: string;
}

export async function createTestEventBus(aws: MotoClients, name: string = uniqueName('flywheel-bus')): Promise<TestEventBus> {
  await aws.eventbridge.send(new CreateEventBusCommand({ Name: name }));
  const target = await aws.sqs.send(new CreateQueueCommand({ QueueName: `${name}-target` }));
  const targetQueueUrl = target.QueueUrl!;
  await aws.eventbridge.send(
    new PutRuleCommand({ Name: `${name}-all`, EventBusName: name, EventPattern: JSON.stringify({ source: [EVENT_SOURCE] }) }),
  );
  await aws.eventbridge.send(
    new PutTargetsCommand({
      Rule: `${name}-all`,
      EventBusName: name,
      Targets: [{ Id: 'observer', Arn: await queueArn(aws, targetQueueUrl) }],
    }),
  );
  return { busName: name, targetQueueUrl };
}
