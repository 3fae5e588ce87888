import { Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import type { StageSettings } from '../config/stages.ts';
import type { FlywheelFunction } from '../constructs/flywheel-function.ts';
import type { QueueAlarms } from '../constructs/queue-alarms.ts';
import { addFeedbackProcessor } from '../feedback/infra/feedback-processor.ts';
import { ModesPipeline } from '../modes/infra/modes-pipeline.ts';
import { DriftWatch } from '../judges/infra/drift-watch.ts';
import { ExperimentsPipeline } from '../experiments/infra/experiments.ts';
import { SlackChannel } from '../people/infra/slack-channel.ts';
import { SlackBot } from '../people/infra/slack-bot.ts';
import { PeopleNotices } from '../people/infra/notices.ts';
import { grantSweepExecutions } from '../sweeps/infra/grant-sweep-executions.ts';
import { grantTrainingExecutions } from '../training/infra/grant-training-executions.ts';
import type { DataStack } from './data-stack.ts';
import { functionEnvironment } from './function-environment.ts';

export interface PipelineStackProps extends StackProps {
  settings: StageSettings;
  data: DataStack;
}

/**
 * The stateless pipelines: the `flywheel-<stage>` event bus that carries `feedback.stored`, the alarm topic (e-mail
 * `alarms.emails`, and Slack when the stage sets `notifications.slack`), and the capabilities' consumers composed
 * on them: the feedback processor with its queue alarms (`lib/feedback/infra/`), the failure-mode pipeline
 * (`lib/modes/infra/`), the judges' drift watch and the experiments' schedule and consumers (`lib/experiments/infra/`). The other stacks wire their alarms and notice rules to `alarmTopic`.
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
  /** judge.verdict → SQS (+DLQ) → the drift watch (disagreements and a sample queued for people). */
  readonly driftWatch: DriftWatch;
  /** The experiments' schedule, and experiment.proposed / failure-modes.labelled → SQS (+DLQ) → their consumers. */
  readonly experiments: ExperimentsPipeline;
  /** The Slack bot's worker: people.slack.work → SQS `people-slack` (+DLQ) → people/slack-worker. */
  readonly slackBot: SlackBot;
  /** notice.raised (warnings, alerts) → the alarm topic; the notices schedule (stalls, deliveries after quiet hours). */
  readonly notices: PeopleNotices;

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

    const feedback = addFeedbackProcessor(this, {
      settings,
      records: data.records,
      blobs: data.blobs,
      ingest: data.ingest,
      bus: this.bus,
      alarmTopic: this.alarmTopic,
      environment: functionEnvironment(data, this.bus),
    });
    this.processor = feedback.processor;
    this.deadLetterAlarm = feedback.deadLetterAlarm;
    this.ingestAgeAlarms = feedback.ageAlarms;

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
    // The chain publishes judge.verdict after each verdict of the failure-mode judge (the drift watch samples them).
    this.modes.classifier.publishEvents(this.bus);
    this.driftWatch = new DriftWatch(this, 'DriftWatch', {
      settings,
      bus: this.bus,
      records: data.records,
      blobs: data.blobs,
      alarmTopic: this.alarmTopic,
      environment: functionEnvironment(data, this.bus),
    });
    this.experiments = new ExperimentsPipeline(this, 'Experiments', {
      settings,
      bus: this.bus,
      records: data.records,
      blobs: data.blobs,
      archive: data.archive,
      alarmTopic: this.alarmTopic,
      environment: functionEnvironment(data, this.bus),
    });
    // pipeline people: slack
    // The Slack bot's worker: people.slack.work (published by the Slack endpoints) → SQS (+DLQ) → people/slack-worker.
    this.slackBot = new SlackBot(this, 'SlackBot', {
      settings,
      bus: this.bus,
      records: data.records,
      blobs: data.blobs,
      alarmTopic: this.alarmTopic,
      environment: functionEnvironment(data, this.bus),
      grantWorkflows: (fn) => {
        grantSweepExecutions(fn, settings);
        grantTrainingExecutions(fn, settings);
      },
    });
    // pipeline people: notices
    this.notices = new PeopleNotices(this, 'Notices', {
      settings,
      bus: this.bus,
      records: data.records,
      alarmTopic: this.alarmTopic,
      environment: functionEnvironment(data, this.bus),
    });
    // pipeline compute: usage and budgets
  }
}
