import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { StageSettings } from '../config/stages.ts';

/** A queue and the dead-letter queue its undeliverable messages move to. */
export interface QueueWithDeadLetter<Q extends sqs.IQueue = sqs.Queue> {
  queue: Q;
  deadLetterQueue: Q;
}

export interface QueueWithDeadLetterProps {
  /** Removal (`retainData`), the dead letters' retention and the receives before a message is dead-lettered. */
  settings: Pick<StageSettings, 'retainData' | 'deadLetterRetentionDays' | 'maxReceiveCount'>;
  /** At least 6 × the consumer's timeout (plus its batching window), as AWS advises for a Lambda event source. */
  visibilityTimeout: Duration;
  retentionPeriod: Duration;
  /** Long polling for consumers that poll; absent: SQS's default (short polling). */
  receiveMessageWaitTime?: Duration;
}

/** The construct ids `addQueueWithDeadLetter` gives its two queues in the caller's scope. */
export const QUEUE_ID = 'Queue';
export const DEAD_LETTER_QUEUE_ID = 'DeadLetterQueue';

/**
 * Every pipeline's queue with its dead-letter queue: SQS-managed encryption, TLS only, kept or deleted with the
 * stage's data. A message received `maxReceiveCount` times without being deleted moves to the dead-letter queue,
 * kept `deadLetterRetentionDays` for a redrive.
 *
 * Both queues are created directly in `scope` as `DeadLetterQueue` and `Queue` (no construct of their own in
 * between), so a pipeline that made its queues by hand under those ids keeps their logical ids, and CloudFormation
 * does not replace them (test/infra/stateful-logical-ids.test.ts).
 *
 * @example
 * const { queue, deadLetterQueue } = addQueueWithDeadLetter(this, {
 *   settings,
 *   visibilityTimeout: Duration.seconds(6 * CONSUMER_TIMEOUT_SECONDS),
 *   retentionPeriod: Duration.days(4),
 * });
 */
export function addQueueWithDeadLetter(scope: Construct, props: QueueWithDeadLetterProps): QueueWithDeadLetter {
  const { settings } = props;
  const removalPolicy = settings.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
  const deadLetterQueue = new sqs.Queue(scope, DEAD_LETTER_QUEUE_ID, {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    // The dead-letter retention counts from the first enqueue, so it must outlast the source queue's.
    retentionPeriod: Duration.days(settings.deadLetterRetentionDays),
    removalPolicy,
  });
  const queue = new sqs.Queue(scope, QUEUE_ID, {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    visibilityTimeout: props.visibilityTimeout,
    retentionPeriod: props.retentionPeriod,
    ...(props.receiveMessageWaitTime ? { receiveMessageWaitTime: props.receiveMessageWaitTime } : {}),
    deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: settings.maxReceiveCount },
    removalPolicy,
  });
  return { queue, deadLetterQueue };
}
