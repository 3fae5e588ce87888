/**
 * Records port on DynamoDB (one table, keys `pk`/`sk`, indexes `gsi1` and `gsi2`), through the DocumentClient.
 *
 * @example
 * const records = new DynamoDbRecords(DynamoDBDocumentClient.from(new DynamoDBClient({})), 'flywheel-dev');
 * await records.put(item, { condition: { kind: 'absent' } });
 */
import {
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  type DynamoDBDocumentClient,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { PutOptions, PutResult, QueryInput, QueryPage, RecordItem, RecordsPort } from '../../ports/records.ts';
import { TransientError } from '../../errors.ts';
import { decodeCursor, encodeCursor, pageSize } from '../cursor.ts';

const BATCH_SIZE = 25;
const MAX_BATCH_ATTEMPTS = 8;

const INDEX_KEYS = {
  table: { partition: 'pk', sort: 'sk' },
  gsi1: { partition: 'gsi1pk', sort: 'gsi1sk' },
  gsi2: { partition: 'gsi2pk', sort: 'gsi2sk' },
} as const;

export class DynamoDbRecords implements RecordsPort {
  readonly #client: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(client: DynamoDBDocumentClient, tableName: string, options: { sleep?: (ms: number) => Promise<void> } = {}) {
    this.#client = client;
    this.#table = tableName;
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  async put(item: RecordItem, options: PutOptions = {}): Promise<PutResult> {
    const condition = options.condition;
    let conditionParams: Pick<import('@aws-sdk/lib-dynamodb').PutCommandInput, 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'> = {};
    if (condition?.kind === 'absent') {
      conditionParams = { ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': 'pk' } };
    } else if (condition?.kind === 'absentOrOlder') {
      conditionParams = {
        ConditionExpression: 'attribute_not_exists(#pk) OR #field < :value',
        ExpressionAttributeNames: { '#pk': 'pk', '#field': condition.field },
        ExpressionAttributeValues: { ':value': condition.value },
      };
    } else if (condition?.kind === 'unchanged') {
      conditionParams =
        condition.value === undefined
          ? { ConditionExpression: 'attribute_exists(#pk) AND attribute_not_exists(#field)', ExpressionAttributeNames: { '#pk': 'pk', '#field': condition.field } }
          : { ConditionExpression: '#field = :value', ExpressionAttributeNames: { '#field': condition.field }, ExpressionAttributeValues: { ':value': condition.value } };
    }
    try {
      await this.#client.send(new PutCommand({ TableName: this.#table, Item: item, ...conditionParams }));
      return { written: true };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException || (error as Error).name === 'ConditionalCheckFailedException') {
        return { written: false };
      }
      throw error;
    }
  }

  /** BatchWrite in chunks of 25; unprocessed items are retried with exponential backoff and jitter. */
  async putMany(items: RecordItem[]): Promise<void> {
    // A batch may not name the same key twice: the last write of a key wins, as sequential puts would.
    const byKey = new Map<string, RecordItem>();
    for (const item of items) byKey.set(JSON.stringify([item.pk, item.sk]), item);
    const unique = [...byKey.values()];
    for (let start = 0; start < unique.length; start += BATCH_SIZE) {
      let requests: Record<string, unknown>[] = unique
        .slice(start, start + BATCH_SIZE)
        .map((Item) => ({ PutRequest: { Item } }));
      for (let attempt = 1; requests.length > 0; attempt++) {
        if (attempt > MAX_BATCH_ATTEMPTS) {
          throw new TransientError(`BatchWrite left ${requests.length} items unprocessed after ${MAX_BATCH_ATTEMPTS} attempts`);
        }
        if (attempt > 1) await this.#sleep(Math.random() * Math.min(2000, 50 * 2 ** attempt));
        const result = await this.#client.send(
          new BatchWriteCommand({ RequestItems: { [this.#table]: requests as never } }),
        );
        requests = (result.UnprocessedItems?.[this.#table] ?? []) as Record<string, unknown>[];
      }
    }
  }

  async get(pk: string, sk: string): Promise<RecordItem | undefined> {
    const result = await this.#client.send(new GetCommand({ TableName: this.#table, Key: { pk, sk }, ConsistentRead: true }));
    return result.Item as RecordItem | undefined;
  }

  /**
   * Asks for one item more than the page so that a cursor is returned only when more items follow;
   * the cursor is then the key of the page's last item (table keys plus index keys, as DynamoDB's own).
   */
  async query(input: QueryInput): Promise<QueryPage> {
    const index = input.index ?? 'table';
    const keys = INDEX_KEYS[index];
    const limit = pageSize(input.limit);
    const names: Record<string, string> = { '#p': keys.partition };
    const values: Record<string, unknown> = { ':p': input.partition };
    let expression = '#p = :p';
    const sort = input.sort;
    if (sort) {
      names['#s'] = keys.sort;
      if ('beginsWith' in sort) {
        expression += ' AND begins_with(#s, :s)';
        values[':s'] = sort.beginsWith;
      } else if ('between' in sort) {
        expression += ' AND #s BETWEEN :s AND :t';
        values[':s'] = sort.between[0];
        values[':t'] = sort.between[1];
      } else if ('greaterThanOrEqual' in sort) {
        expression += ' AND #s >= :s';
        values[':s'] = sort.greaterThanOrEqual;
      } else {
        expression += ' AND #s <= :s';
        values[':s'] = sort.lessThanOrEqual;
      }
    }
    const params: QueryCommandInput = {
      TableName: this.#table,
      KeyConditionExpression: expression,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ScanIndexForward: !input.descending,
      Limit: limit + 1,
      ...(index === 'table' ? { ConsistentRead: true } : { IndexName: index }),
      ...(input.cursor ? { ExclusiveStartKey: decodeCursor<Record<string, unknown>>(input.cursor) } : {}),
    };
    const result = await this.#client.send(new QueryCommand(params));
    const items = (result.Items ?? []) as RecordItem[];
    if (items.length > limit) {
      const page = items.slice(0, limit);
      const last = page[page.length - 1]!;
      const key: Record<string, unknown> = { pk: last.pk, sk: last.sk };
      if (index !== 'table') {
        key[keys.partition] = last[keys.partition];
        key[keys.sort] = last[keys.sort];
      }
      return { items: page, cursor: encodeCursor(key) };
    }
    return result.LastEvaluatedKey ? { items, cursor: encodeCursor(result.LastEvaluatedKey) } : { items };
  }

  async delete(pk: string, sk: string): Promise<void> {
    await this.#client.send(new DeleteCommand({ TableName: this.#table, Key: { pk, sk } }));
  }
}
