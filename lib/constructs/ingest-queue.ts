import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { INGEST_RETENTION_DAYS, INGEST_VISIBILITY_TIMEOUT_SECONDS } from '../config/ingest-timing.ts';
import type { StageSettings } from '../config/stages.ts';

export interface IngestQueueProps {
  settings: StageSettings;
  /** Pinned CloudFormation logical ids of the queue and its dead-letter queue. */
  logicalId: string;
  deadLetterLogicalId: string;
}

/**
 * The feedback ingestion queue and its dead-letter queue: SQS-managed encryption, TLS only. A message received
 * `maxReceiveCount` times without being deleted moves to the dead-letter queue, kept up to 14 days for
 * `flywheel dlq redrive`.
 */
export class IngestQueue extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: IngestQueueProps) {
    super(scope, id);
    const { settings } = props;
    const removalPolicy = settings.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;

    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // The dead-letter retention counts from the first enqueue, so it must outlast the source queue's.
      retentionPeriod: Duration.days(settings.deadLetterRetentionDays),
      removalPolicy,
    });
    (this.deadLetterQueue.node.defaultChild as sqs.CfnQueue).overrideLogicalId(props.deadLetterLogicalId);

    this.queue = new sqs.Queue(this, 'Queue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // 6 × processor timeout (30 s) + batching window (5 s) = 185 s: see lib/config/ingest-timing.ts.
      visibilityTimeout: Duration.seconds(INGEST_VISIBILITY_TIMEOUT_SECONDS),
      retentionPeriod: Duration.days(INGEST_RETENTION_DAYS),
      receiveMessageWaitTime: Duration.seconds(20),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: settings.maxReceiveCount },
      removalPolicy,
    });
    (this.queue.node.defaultChild as sqs.CfnQueue).overrideLogicalId(props.logicalId);
  }
}
