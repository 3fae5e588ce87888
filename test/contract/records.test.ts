import { DynamoDbRecords } from '../../lib/drivers/aws/dynamodb-records.ts';
import { SqliteRecords } from '../../lib/drivers/local/sqlite-records.ts';
import { createTestTable, motoClients } from '../support/aws-test-resources.ts';
import { localFixture } from './local-driver-fixture.ts';
import { describeRecordsContract } from './records.contract.ts';

const aws = motoClients();
const local = localFixture();

describeRecordsContract('DynamoDB (moto)', async () => new DynamoDbRecords(aws.documents, await createTestTable(aws)));
describeRecordsContract('SQLite', async () => new SqliteRecords(local.database('records.sqlite')));
