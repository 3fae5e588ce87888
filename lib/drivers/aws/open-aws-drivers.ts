/**
 * AWS drivers opened from a command line's flags (a region, a custom endpoint such as moto), so the CLI reaches a
 * stage's queues, table and Batch through the ports and never imports the SDK itself. Each `close` releases what it
 * opened.
 *
 * @example
 * const { records, close } = openDynamoDbRecords({ region: 'eu-west-1' }, 'flywheel-dev-records');
 * try { await listApiKeys(records); } finally { close(); }
 */
import { BatchClient } from '@aws-sdk/client-batch';
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { JobsPort } from '../../ports/jobs.ts';
import type { QueuePort } from '../../ports/queue.ts';
import type { RecordsPort } from '../../ports/records.ts';
import { BatchJobs, batchJobsConfigFromEnv } from './batch-jobs.ts';
import { DynamoDbRecords } from './dynamodb-records.ts';
import { SqsQueue } from './sqs-queue.ts';

/** Where the SDK clients connect: the environment's region and endpoints unless given. */
export interface AwsClientFlags {
  region?: string;
  endpointUrl?: string;
}

function clientConfig(flags: AwsClientFlags): { region?: string; endpoint?: string } {
  return { ...(flags.region ? { region: flags.region } : {}), ...(flags.endpointUrl ? { endpoint: flags.endpointUrl } : {}) };
}

/** The dead-letter queue at `dlqUrl` and, when `queueUrl` is given, the source queue it redrives to (one SQS client). */
export function openSqsQueues(flags: AwsClientFlags, urls: { dlqUrl: string; queueUrl?: string }): { dlq: QueuePort; source: QueuePort | undefined; close: () => Promise<void> } {
  const client = new SQSClient(clientConfig(flags));
  return {
    dlq: new SqsQueue(client, urls.dlqUrl),
    source: urls.queueUrl ? new SqsQueue(client, urls.queueUrl) : undefined,
    close: async () => client.destroy(),
  };
}

/** The records port of the DynamoDB table `tableName` (undefined attributes dropped, as the Lambdas write them). */
export function openDynamoDbRecords(flags: AwsClientFlags, tableName: string): { records: RecordsPort; close: () => void } {
  const client = new DynamoDBClient(clientConfig(flags));
  const records = new DynamoDbRecords(DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } }), tableName);
  return { records, close: () => client.destroy() };
}

/** The jobs port of AWS Batch, its queues and job definitions from `env` (FLYWHEEL_GPU_JOB_QUEUE, …). */
export function openBatchJobs(flags: AwsClientFlags, env: Record<string, string | undefined> = process.env): { jobs: JobsPort; close: () => Promise<void> } {
  const config = clientConfig(flags);
  const jobs = new BatchJobs(new BatchClient(config), new CloudWatchLogsClient(config), batchJobsConfigFromEnv(env));
  return { jobs, close: async () => {} };
}
