/**
 * The AWS drivers bundled as `Ports`, configured from the Lambda environment. Clients are built once per call
 * (call it once per process, at module scope in `functions/…`). The SDK itself honours `AWS_ENDPOINT_URL` (and
 * `AWS_ENDPOINT_URL_<SERVICE>`), so the same code runs against moto or LocalStack; S3 then uses path-style URLs.
 *
 * @example
 * const ports = awsPortsFromEnv(); // FLYWHEEL_TABLE, FLYWHEEL_BUCKET, FLYWHEEL_INGEST_QUEUE_URL, …
 *
 * `query` (Athena) is there when `FLYWHEEL_ATHENA_WORKGROUP` and `FLYWHEEL_GLUE_DATABASE` are set (`ATHENA_QUERY_ENV`).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { Ports } from '../../ports/ports.ts';
import { ConfigurationError } from '../../errors.ts';
import { ATHENA_QUERY_ENV, AthenaQuery } from './athena-query.ts';
import { DynamoDbRecords } from './dynamodb-records.ts';
import { EventBridgeEvents } from './eventbridge-events.ts';
import { S3Blobs } from './s3-blobs.ts';
import { SqsQueue } from './sqs-queue.ts';

/** The environment variables the AWS drivers read; the infra stacks set them on every function. */
export const AWS_PORTS_ENV = [
  'FLYWHEEL_TABLE',
  'FLYWHEEL_BUCKET',
  'FLYWHEEL_INGEST_QUEUE_URL',
  'FLYWHEEL_INGEST_DLQ_URL',
  'FLYWHEEL_EVENT_BUS',
] as const;

export type AwsPortsEnvName = (typeof AWS_PORTS_ENV)[number];

export function awsPortsFromEnv(env: Record<string, string | undefined> = process.env): Ports {
  const missing = AWS_PORTS_ENV.filter((name) => !env[name]);
  if (missing.length > 0) {
    throw new ConfigurationError(`Missing environment variable${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`);
  }
  const value = (name: AwsPortsEnvName): string => env[name]!;
  const customEndpoint = Boolean(env.AWS_ENDPOINT_URL || env.AWS_ENDPOINT_URL_S3);
  const documents = DynamoDBDocumentClient.from(new DynamoDBClient({}), {
    marshallOptions: { removeUndefinedValues: true },
  });
  const sqs = new SQSClient({});
  const queryConfigured = Object.values(ATHENA_QUERY_ENV).every((name) => Boolean(env[name]));
  return {
    ...(queryConfigured ? { query: AthenaQuery.fromEnv(env) } : {}),
    records: new DynamoDbRecords(documents, value('FLYWHEEL_TABLE')),
    blobs: new S3Blobs(new S3Client({ forcePathStyle: customEndpoint }), value('FLYWHEEL_BUCKET')),
    ingestQueue: new SqsQueue(sqs, value('FLYWHEEL_INGEST_QUEUE_URL')),
    ingestDeadLetters: new SqsQueue(sqs, value('FLYWHEEL_INGEST_DLQ_URL')),
    events: new EventBridgeEvents(new EventBridgeClient({}), value('FLYWHEEL_EVENT_BUS')),
    now: () => new Date(),
  };
}
