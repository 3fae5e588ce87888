import { Duration } from 'aws-cdk-lib';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { INGEST_RETENTION_DAYS, INGEST_VISIBILITY_TIMEOUT_SECONDS } from '../../config/ingest-timing.ts';
import type { StageSettings } from '../../config/stages.ts';
import { addQueueWithDeadLetter, type QueueWithDeadLetter } from '../../constructs/queue-with-dead-letter.ts';

export interface IngestQueueProps {
  settings: StageSettings;
  /** Pinned CloudFormation logical ids of the queue and its dead-letter queue. */
  logicalId: string;
  deadLetterLogicalId: string;
}

/**
 * The feedback ingestion queue and its dead-letter queue (`addQueueWithDeadLetter`), in the stateful Data stack: the
 * API sends to it, the feedback processor (`addFeedbackProcessor`) consumes it, and `flywheel dlq redrive` replays its
 * dead letters.
 */
export class IngestQueue extends Construct implements QueueWithDeadLetter {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: IngestQueueProps) {
    super(scope, id);
    const { queue, deadLetterQueue } = addQueueWithDeadLetter(this, {
      settings: props.settings,
      // 6 × processor timeout (30 s) + batching window (5 s) = 185 s: see lib/config/ingest-timing.ts.
      visibilityTimeout: Duration.seconds(INGEST_VISIBILITY_TIMEOUT_SECONDS),
      retentionPeriod: Duration.days(INGEST_RETENTION_DAYS),
      receiveMessageWaitTime: Duration.seconds(20),
    });
    // The Data stack pins the logical ids of its stateful resources (STATEFUL_LOGICAL_IDS), as it has from the first
    // deploy: the path-derived ids were never used for these two queues.
    (deadLetterQueue.node.defaultChild as sqs.CfnQueue).overrideLogicalId(props.deadLetterLogicalId);
    (queue.node.defaultChild as sqs.CfnQueue).overrideLogicalId(props.logicalId);
    this.queue = queue;
    this.deadLetterQueue = deadLetterQueue;
  }
}
