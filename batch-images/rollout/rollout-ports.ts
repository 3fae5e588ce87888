/**
 * The ports a rollout job needs (records and blobs only): local drivers over FLYWHEEL_DATA_DIR when it is set (the
 * local runtime's jobs, tests), else DynamoDB and S3 from FLYWHEEL_TABLE and FLYWHEEL_BUCKET (the job definition
 * sets them; the SDK honours AWS_ENDPOINT_URL, so moto works too). A rollout job touches no queue or event bus, so
 * it does not ask for their variables as `awsPortsFromEnv` would.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { ConfigurationError } from '../../lib/errors.ts';
import { DynamoDbRecords } from '../../lib/drivers/aws/dynamodb-records.ts';
import { S3Blobs } from '../../lib/drivers/aws/s3-blobs.ts';
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import type { BlobsPort } from '../../lib/ports/blobs.ts';
import type { RecordsPort } from '../../lib/ports/records.ts';

export interface RolloutPorts {
  records: RecordsPort;
  blobs: BlobsPort;
  /** Where they live, for the log. */
  describe: string;
  close(): void;
}

export function rolloutPortsFromEnv(env: Record<string, string | undefined> = process.env): RolloutPorts {
  const dataDir = env['FLYWHEEL_DATA_DIR'];
  if (dataDir) {
    const ports = openLocalPorts(dataDir);
    return { records: ports.records, blobs: ports.blobs, describe: `local data folder ${dataDir}`, close: () => ports.close() };
  }
  const missing = ['FLYWHEEL_TABLE', 'FLYWHEEL_BUCKET'].filter((name) => !env[name]);
  if (missing.length > 0) throw new ConfigurationError(`Missing environment variable${missing.length > 1 ? 's' : ''}: ${missing.join(', ')} (or set FLYWHEEL_DATA_DIR for local ports)`);
  const customEndpoint = Boolean(env['AWS_ENDPOINT_URL'] || env['AWS_ENDPOINT_URL_S3']);
  const documents = DynamoDBDocumentClient.from(new DynamoDBClient({}), { marshallOptions: { removeUndefinedValues: true } });
  return {
    records: new DynamoDbRecords(documents, env['FLYWHEEL_TABLE']!),
    blobs: new S3Blobs(new S3Client({ forcePathStyle: customEndpoint }), env['FLYWHEEL_BUCKET']!),
    describe: `table ${env['FLYWHEEL_TABLE']}, bucket ${env['FLYWHEEL_BUCKET']}`,
    close: () => {},
  };
}
