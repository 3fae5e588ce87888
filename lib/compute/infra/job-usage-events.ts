/**
 * Compute accounting on AWS: an EventBridge rule on the account's default bus (where AWS Batch sends its events)
 * takes every `Batch Job State Change` of Flywheel's job queues into a queue with its dead-letter queue and alarms,
 * consumed by `compute/job-events` (`functions/compute/job-events.ts`: job usage, usage per day, budget notices).
 * It lives in the Compute stack beside the queues whose ARNs the rule names (the Pipeline stack comes before the
 * Compute stack, which takes its alarm topic: naming the queues there would make a cycle).
 *
 * @example
 * new JobUsageEvents(this, 'JobUsage', { settings, queues: [gpu.queue, cpu.queue], records: data.records, bus, alarmTopic, environment });
 */
import { Duration } from 'aws-cdk-lib';
import type * as batch from 'aws-cdk-lib/aws-batch';
import * as events from 'aws-cdk-lib/aws-events';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { StageSettings } from '../../config/stages.ts';
import { addEventQueueConsumer } from '../../constructs/event-queue-consumer.ts';
import { FlywheelFunction } from '../../constructs/flywheel-function.ts';
import type { QueueAlarms } from '../../constructs/queue-alarms.ts';
import type { RecordsTable } from '../../constructs/records-table.ts';

/** Seconds the consumer may run on a batch of 10 events (a few reads and puts each, a budget check at a job's end). */
const CONSUMER_TIMEOUT_SECONDS = 60;

/** The event Batch sends on each job state change (a DescribeJobs job as its detail). */
export const BATCH_JOB_STATE_CHANGE = { source: 'aws.batch', detailType: 'Batch Job State Change' } as const;

export interface JobUsageEventsProps {
  settings: StageSettings;
  /** Flywheel's job queues: only their jobs are accounted. */
  queues: batch.IJobQueue[];
  records: RecordsTable;
  /** Flywheel's bus: a budget notice is published there (`notice.raised`). */
  bus: events.IEventBus;
  alarmTopic: ITopic;
  environment: Record<string, string>;
}

export class JobUsageEvents extends Construct {
  readonly rule: events.Rule;
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  readonly consumer: FlywheelFunction;
  readonly alarms: QueueAlarms;

  constructor(scope: Construct, id: string, props: JobUsageEventsProps) {
    super(scope, id);
    const { settings } = props;
    const pipe = addEventQueueConsumer(this, {
      settings,
      queue: { visibilityTimeout: Duration.seconds(6 * CONSUMER_TIMEOUT_SECONDS), retentionPeriod: Duration.days(4) },
      ruleId: 'Rule',
      // No eventBus: the default bus, where aws.batch events arrive.
      rule: {
        description: `Flywheel ${settings.stage}: Batch job state changes of Flywheel's job queues, for compute accounting`,
        eventPattern: { source: [BATCH_JOB_STATE_CHANGE.source], detailType: [BATCH_JOB_STATE_CHANGE.detailType], detail: { jobQueue: props.queues.map((q) => q.jobQueueArn) } },
      },
      maxEventAge: Duration.hours(24),
      consumer: () =>
        new FlywheelFunction(this, 'Consumer', {
          lambda: 'compute/job-events',
          settings,
          timeout: Duration.seconds(CONSUMER_TIMEOUT_SECONDS),
          environment: props.environment,
          description: `Flywheel compute/job-events (${settings.stage})`,
        })
          // Job usage, daily slices, budgets and their crossing markers, notices (records); notice.raised (bus).
          .readWriteRecords(props.records)
          .publishEvents(props.bus),
      eventSource: { batchSize: 10, maxBatchingWindow: Duration.seconds(5) },
      alarmTopic: props.alarmTopic,
      alarms: {
        purpose: 'Compute accounting (Batch job state changes)',
        maxAgeSeconds: settings.alarms.queueAgeSeconds.modes,
        deadLetterHint: 'a job state change that could not be recorded (see the compute/job-events errors); redrive it once fixed (`flywheel dlq redrive --queue-url <queue> --dlq-url <dlq>`; recording is idempotent)',
      },
    });
    ({ queue: this.queue, deadLetterQueue: this.deadLetterQueue, rule: this.rule, consumer: this.consumer, alarms: this.alarms } = pipe);
  }
}
