import { SqsQueue } from '../../lib/drivers/aws/sqs-queue.ts';
import { SqliteQueue } from '../../lib/drivers/local/sqlite-queue.ts';
import { createTestQueue, motoClients } from '../support/aws-test-resources.ts';
import { localFixture } from './local-driver-fixture.ts';
import { describeQueueContract } from './queue.contract.ts';

const aws = motoClients();
const local = localFixture();

describeQueueContract('SQS (moto)', async ({ maxReceiveCount }) => {
  const created = await createTestQueue(aws, { maxReceiveCount });
  return { queue: new SqsQueue(aws.sqs, created.queueUrl), deadLetters: new SqsQueue(aws.sqs, created.deadLetterUrl) };
});

describeQueueContract('SQLite', async ({ maxReceiveCount }) => {
  const db = local.database('queue.sqlite');
  const deadLetters = new SqliteQueue(db, 'dlq');
  return { queue: new SqliteQueue(db, 'main', { deadLetter: deadLetters, maxReceiveCount }), deadLetters };
});
