import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';

/** The secondary indexes of the single table, as the records port names them (`QueryInput.index`). */
export const RECORD_INDEXES = ['gsi1', 'gsi2'] as const;

/** Attribute that DynamoDB's TTL reads (epoch seconds): records that may expire set it. */
export const RECORD_TTL_ATTRIBUTE = 'expiresAt';

export interface RecordsTableProps {
  /** Keep the table (and refuse its deletion) when the stack goes. */
  retain: boolean;
  /** The CloudFormation logical id, pinned so that moving this construct never replaces the table. */
  logicalId: string;
}

const READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:ConditionCheckItem'];
const WRITE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];

/**
 * The single records table (`lib/ports/records.ts`): string keys pk/sk, indexes gsi1 (gsi1pk/gsi1sk) and gsi2
 * (gsi2pk/gsi2sk) projecting all attributes, on-demand, point-in-time recovery, encrypted with the AWS-managed key,
 * TTL on `expiresAt`.
 */
export class RecordsTable extends Construct {
  readonly table: dynamodb.Table;

  constructor(scope: Construct, id: string, props: RecordsTableProps) {
    super(scope, id);
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      timeToLiveAttribute: RECORD_TTL_ATTRIBUTE,
      deletionProtection: props.retain,
      removalPolicy: props.retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    for (const index of RECORD_INDEXES) {
      this.table.addGlobalSecondaryIndex({
        indexName: index,
        partitionKey: { name: `${index}pk`, type: dynamodb.AttributeType.STRING },
        sortKey: { name: `${index}sk`, type: dynamodb.AttributeType.STRING },
        projectionType: dynamodb.ProjectionType.ALL,
      });
    }
    (this.table.node.defaultChild as dynamodb.CfnTable).overrideLogicalId(props.logicalId);
  }

  get tableName(): string {
    return this.table.tableName;
  }

  /** Gets, batch gets and queries on the table and its named indexes (no `index/*` wildcard). */
  grantRead(grantee: iam.IGrantable): iam.Grant {
    return iam.Grant.addToPrincipal({ grantee, actions: READ_ACTIONS, resourceArns: this.resourceArns() });
  }

  /** Reads plus (conditional) puts, updates, deletes and batch writes. */
  grantReadWrite(grantee: iam.IGrantable): iam.Grant {
    const writes = iam.Grant.addToPrincipal({ grantee, actions: WRITE_ACTIONS, resourceArns: [this.table.tableArn] });
    return this.grantRead(grantee).combine(writes);
  }

  /**
   * Item access by partition-key prefix (`dynamodb:LeadingKeys`, IAM `StringLike` patterns such as `EVAL#*`): GetItem
   * and Query under `read`, PutItem under `write` (no update, delete or batch write), and Query on an index for the
   * index partitions listed per index. Table statements also require the key to be present, so a request that names
   * no partition (Scan, which is not granted anyway) never passes on an empty match.
   *
   * @example
   * records.grantPartitions(role, { read: ['EVAL#*'], write: ['EVAL#*', 'ROLLOUT#*'] });
   */
  grantPartitions(grantee: iam.IGrantable, access: { read: readonly string[]; write: readonly string[]; indexQueries?: Partial<Record<(typeof RECORD_INDEXES)[number], readonly string[]>> }): void {
    const leading = (patterns: readonly string[], requirePresent: boolean) => ({
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...patterns] },
      ...(requirePresent ? { Null: { 'dynamodb:LeadingKeys': 'false' } } : {}),
    });
    const add = (actions: string[], resources: string[], conditions: Record<string, unknown>) =>
      grantee.grantPrincipal.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources, conditions }));
    if (access.read.length > 0) add(['dynamodb:GetItem', 'dynamodb:Query'], [this.table.tableArn], leading(access.read, true));
    if (access.write.length > 0) add(['dynamodb:PutItem'], [this.table.tableArn], leading(access.write, true));
    for (const index of RECORD_INDEXES) {
      const partitions = access.indexQueries?.[index];
      if (partitions && partitions.length > 0) add(['dynamodb:Query'], [`${this.table.tableArn}/index/${index}`], leading(partitions, false));
    }
  }

  private resourceArns(): string[] {
    return [this.table.tableArn, ...RECORD_INDEXES.map((index) => `${this.table.tableArn}/index/${index}`)];
  }
}
