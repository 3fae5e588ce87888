import type { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import type { StageSettings } from '../config/stages.ts';
import type { ArtifactsBucket } from './artifacts-bucket.ts';
import type { FlywheelFunction } from './flywheel-function.ts';
import { QueueAlarms } from './queue-alarms.ts';
import type { RecordsTable } from './records-table.ts';
import { addQueueWithDeadLetter, type QueueWithDeadLetter, type QueueWithDeadLetterProps } from './queue-with-dead-letter.ts';

/** What a capability's event consumer on Flywheel's bus is wired to (the props its construct shares with the others). */
export interface EventConsumerWiring {
  settings: StageSettings;
  bus: events.IEventBus;
  records: RecordsTable;
  blobs: ArtifactsBucket;
  alarmTopic: ITopic;
  environment: Record<string, string>;
}

export interface EventQueueConsumerProps<F extends FlywheelFunction> {
  settings: StageSettings;
  /** The queues' visibility timeout (at least 6 × the consumer's timeout) and retention. */
  queue: Omit<QueueWithDeadLetterProps, 'settings'>;
  /** The rule's construct id in `scope` (`Rule`, `OnStored`…). */
  ruleId: string;
  /** The rule: no `eventBus` is the account's default bus (where AWS services send their events). */
  rule: { description: string; eventBus?: events.IEventBus; eventPattern: events.EventPattern };
  /** How long EventBridge keeps retrying a delivery (10 attempts at most) before the event goes to the dead letters. */
  maxEventAge: Duration;
  /** Makes the consumer in `scope`, after the queues and the rule; its grants are the caller's. */
  consumer: () => F;
  /** Messages per invocation (and the batching window); failures are reported per message. */
  eventSource: { batchSize: number; maxBatchingWindow?: Duration };
  alarmTopic: ITopic;
  /** The queue alarms (`QueueAlarms` as `QueueAlarms` in `scope`): what the queue carries, the age that alarms, the redrive hint. */
  alarms: { purpose: string; maxAgeSeconds: number; deadLetterHint: string };
}

export interface EventQueueConsumer<F extends FlywheelFunction> extends QueueWithDeadLetter {
  rule: events.Rule;
  consumer: F;
  alarms: QueueAlarms;
}

/**
 * Every "EventBridge rule → SQS queue with a dead-letter queue → consumer function" of the stacks: the queues
 * (`addQueueWithDeadLetter`), a rule that targets the queue (undeliverable events go to the dead letters), the
 * consumer on the queue with partial batch failures, its error alarm, and the queue alarms. Everything is created
 * directly in `scope` under the ids the pipelines had before (`Queue`, `DeadLetterQueue`, `ruleId`, the consumer's
 * own, `QueueAlarms`), so no logical id changes (test/infra/stateful-logical-ids.test.ts).
 *
 * @example
 * const pipe = addEventQueueConsumer(this, {
 *   settings, queue: { visibilityTimeout: Duration.seconds(360), retentionPeriod: Duration.days(4) },
 *   ruleId: 'OnStored', rule: { description, eventBus: bus, eventPattern: { source: [EVENT_SOURCE], detailType: ['report.stored'] } },
 *   maxEventAge: Duration.hours(24), consumer: () => new FlywheelFunction(this, 'Classify', { ... }),
 *   eventSource: { batchSize: 10, maxBatchingWindow: Duration.seconds(5) }, alarmTopic,
 *   alarms: { purpose: 'Failure-mode classification', maxAgeSeconds: 900, deadLetterHint: 'redrive them' },
 * });
 */
export function addEventQueueConsumer<F extends FlywheelFunction>(scope: Construct, props: EventQueueConsumerProps<F>): EventQueueConsumer<F> {
  const { settings } = props;
  const { queue, deadLetterQueue } = addQueueWithDeadLetter(scope, { settings, ...props.queue });
  const rule = new events.Rule(scope, props.ruleId, {
    ...props.rule,
    targets: [new targets.SqsQueue(queue, { deadLetterQueue, retryAttempts: 10, maxEventAge: props.maxEventAge })],
  });
  const consumer = props.consumer();
  consumer.fn.addEventSource(new SqsEventSource(queue, { ...props.eventSource, reportBatchItemFailures: true }));
  consumer.alarmOnErrors(props.alarmTopic, settings.alarms.handlerErrorThreshold);
  const alarms = new QueueAlarms(scope, 'QueueAlarms', {
    ...props.alarms,
    queue,
    deadLetterQueue,
    alarmTopic: props.alarmTopic,
    deadLetterMaxAgeSeconds: settings.alarms.queueAgeSeconds.deadLetter,
    deadLetterDepthThreshold: settings.alarms.deadLetterDepthThreshold,
  });
  return { queue, deadLetterQueue, rule, consumer, alarms };
}
