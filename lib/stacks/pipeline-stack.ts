import { Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import {
  INGEST_BATCH_SIZE,
  INGEST_MAX_BATCHING_WINDOW_SECONDS,
  INGEST_PROCESSOR_TIMEOUT_SECONDS,
} from '../config/ingest-timing.ts';
import type { StageSettings } from '../config/stages.ts';
import { FlywheelFunction } from '../constructs/flywheel-function.ts';
import { QueueAlarms } from '../constructs/queue-alarms.ts';
import { ModesPipeline } from '../modes/infra/modes-pipeline.ts';
import { SlackChannel } from '../people/infra/slack-channel.ts';
import type { DataStack } from './data-stack.ts';
import { functionEnvironment } from './function-environment.ts';

export interface PipelineStackProps extends StackProps {
  settings: StageSettings;
  data: DataStack;
}

/**
 * The stateless ingestion pipeline: the queue processor (SQS event source, partial batch failures), the
 * `flywheel-<stage>` event bus that carries `feedback.stored`, and the alarm topic with the alarms on the
 * dead-letter queue depth, on the age of the oldest message of every queue, and on the processor's errors, delivered by e-mail (`alarms.emails`) and to Slack when the
 * stage sets `notifications.slack`. The other stacks wire their alarms and notice rules to `alarmTopic`.
 */
export class PipelineStack extends Stack {
  readonly bus: EventBus;
  readonly alarmTopic: Topic;
  /** The alarm topic in Slack, when the stage sets `notifications.slack`. */
  readonly slack?: SlackChannel;
  readonly processor: FlywheelFunction;
  readonly deadLetterAlarm: Alarm;
  /** Age of the oldest message in the ingestion queue and its dead-letter queue (the depth is `deadLetterAlarm`). */
  readonly ingestAgeAlarms: QueueAlarms;
  /** feedback.stored / report.stored → SQS (+DLQ) → the failure-mode classifier. */
  readonly modes: ModesPipeline;

  constructor(scope: Construct, id: string, props: PipelineStackProps) {
    super(scope, id, props);
    const { settings, data } = props;

    this.bus = new EventBus(this, 'Bus', { eventBusName: `flywheel-${settings.stage}` });

    // CloudWatch alarms publish to an encrypted topic only if the key lets cloudwatch.amazonaws.com use it, which the
    // AWS-managed alias/aws/sns key does not: hence a customer key.
    const topicKey = new Key(this, 'AlarmTopicKey', {
      description: `Flywheel ${settings.stage} alarm topic`,
      enableKeyRotation: true,
      pendingWindow: Duration.days(7),
      removalPolicy: RemovalPolicy.DESTROY,
    });
    topicKey.grant(new ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey');
    this.alarmTopic = new Topic(this, 'AlarmTopic', {
      displayName: `Flywheel ${settings.stage} alarms`,
      masterKey: topicKey,
      enforceSSL: true,
    });
    for (const email of settings.alarms.emails) this.alarmTopic.addSubscription(new EmailSubscription(email));
    const slack = settings.notifications.slack;
    if (slack) this.slack = new SlackChannel(this, 'Slack', { stage: settings.stage, ...slack, topic: this.alarmTopic });

    this.processor = new FlywheelFunction(this, 'Processor', {
      lambda: 'feedback/process',
      settings,
      timeout: Duration.seconds(INGEST_PROCESSOR_TIMEOUT_SECONDS),
      environment: functionEnvironment(data, this.bus),
      description: `Flywheel feedback processor (${settings.stage}): queue to records, raw archive and feedback.stored`,
    })
      .readWriteRecords(data.records)
      .readBlobs(data.blobs)
      .writeBlobs(data.blobs)
      .publishEvents(this.bus);
    this.processor.fn.addEventSource(
      new SqsEventSource(data.ingest.queue, {
        batchSize: INGEST_BATCH_SIZE,
        maxBatchingWindow: Duration.seconds(INGEST_MAX_BATCHING_WINDOW_SECONDS),
        reportBatchItemFailures: true,
      }),
    );
    this.processor.alarmOnErrors(this.alarmTopic, settings.alarms.handlerErrorThreshold);

    this.deadLetterAlarm = new Alarm(this, 'DeadLetterDepthAlarm', {
      alarmDescription: `Feedback messages in the dead-letter queue: inspect with "flywheel dlq list", replay with "flywheel dlq redrive"`,
      metric: data.ingest.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(1),
        statistic: 'Maximum',
      }),
      threshold: settings.alarms.deadLetterDepthThreshold,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.deadLetterAlarm.addAlarmAction(new SnsAction(this.alarmTopic));
    this.deadLetterAlarm.addOkAction(new SnsAction(this.alarmTopic));
    this.ingestAgeAlarms = new QueueAlarms(this, 'IngestQueueAlarms', {
      purpose: 'Feedback ingestion',
      queue: data.ingest.queue,
      deadLetterQueue: data.ingest.deadLetterQueue,
      alarmTopic: this.alarmTopic,
      maxAgeSeconds: settings.alarms.queueAgeSeconds.ingest,
      deadLetterMaxAgeSeconds: settings.alarms.queueAgeSeconds.deadLetter,
      deadLetterHint: 'inspect with "flywheel dlq list", replay with "flywheel dlq redrive"',
    });

    const judgeModel = this.node.tryGetContext('judgeModel') as string | undefined;
    const embeddingModel = this.node.tryGetContext('embeddingModel') as string | undefined;
    this.modes = new ModesPipeline(this, 'Modes', {
      settings,
      bus: this.bus,
      records: data.records,
      blobs: data.blobs,
      alarmTopic: this.alarmTopic,
      environment: functionEnvironment(data, this.bus),
      ...(judgeModel ? { judgeModel } : {}),
      ...(embeddingModel ? { embeddingModel } : {}),
    });
  }
}
