/** The REQUEST authorizer of every API method: key → tenant and scopes (lib/auth/lambda-authorizer.ts). */
import middy from '@middy/core';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbRecords } from '../../lib/drivers/aws/dynamodb-records.ts';
import { makeApiAuthorizer } from '../../lib/auth/lambda-authorizer.ts';
import { observability } from '../observability.ts';

const obs = observability('api-authorizer');
const table = process.env.FLYWHEEL_TABLE;
if (!table) throw new Error('Missing environment variable: FLYWHEEL_TABLE');
const records = new DynamoDbRecords(DynamoDBDocumentClient.from(new DynamoDBClient({}), { marshallOptions: { removeUndefinedValues: true } }), table);

export const handler = middy(makeApiAuthorizer(records)).use(obs.middlewares);
