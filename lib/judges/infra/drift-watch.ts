import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { addEventQueueConsumer, type EventConsumerWiring } from '../../constructs/event-queue-consumer.ts';
import { FlywheelFunction } from '../../constructs/flywheel-function.ts';
import type { QueueAlarms } from '../../constructs/queue-alarms.ts';
import { EVENT_SOURCE } from '../../ports/events.ts';
import { DRIFT_EVENT_TYPES, DRIFT_SAMPLE_FRACTION_ENV } from '../drift/consumers/watch-verdicts-consumer.ts';

export interface DriftWatchProps extends EventConsumerWiring {
  /** Share of production verdicts sampled for people (0–1); default the handler's (0.05). */
  sampleFraction?: number;
}

/** Seconds the drift-watch consumer may run (a batch of 10 verdicts, a few reads and puts each). */
const DRIFT_WATCH_TIMEOUT_SECONDS = 30;

/**
 * The drift watch on AWS: a rule on the Flywheel bus sends every `judge.verdict` to an SQS queue (with a dead-letter
 * queue, `addQueueWithDeadLetter`) that feeds the `judges/drift-watch` function (partial batch failures), which queues
 * every judge–user disagreement and a sample of the verdicts for people to label. Alarms (`QueueAlarms`): the age of
 * the oldest message in either queue and the dead-letter depth. A demotion by the drift watch (the rolling kappa
 * dropped: `judge.demoted` with `by: drift-watch`) raises an alert notice (`checkDrift`), which reaches the alarm topic
 * through `notice.raised` (`lib/people/infra/notices.ts`), so people hear of it once on e-mail and the stage's Slack
 * channel; no rule here sends `judge.demoted` there as well.
 */
export class DriftWatch extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  readonly consumer: FlywheelFunction;
  readonly rule: events.Rule;
  readonly alarms: QueueAlarms;

  constructor(scope: Construct, id: string, props: DriftWatchProps) {
    super(scope, id);
    const { settings } = props;
    const pipe = addEventQueueConsumer(this, {
      settings,
      queue: { visibilityTimeout: Duration.seconds(6 * DRIFT_WATCH_TIMEOUT_SECONDS), retentionPeriod: Duration.days(4) },
      ruleId: 'OnVerdict',
      rule: {
        description: "Every production verdict of a judge goes to the drift watch (disagreements and a sample are queued for people)",
        eventBus: props.bus,
        eventPattern: { source: [EVENT_SOURCE], detailType: [...DRIFT_EVENT_TYPES] },
      },
      maxEventAge: Duration.hours(24),
      consumer: () =>
        new FlywheelFunction(this, 'Consumer', {
          lambda: 'judges/drift-watch',
          settings,
          memorySize: 512,
          timeout: Duration.seconds(DRIFT_WATCH_TIMEOUT_SECONDS),
          environment: { ...props.environment, ...(props.sampleFraction !== undefined ? { [DRIFT_SAMPLE_FRACTION_ENV]: String(props.sampleFraction) } : {}) },
          description: `Flywheel judge drift watch (${settings.stage}): queues judge-user disagreements and a sample of verdicts for people`,
        })
          // Queues annotation items (records); reads the signal or attempt it names (records, and a diff blob) for its length.
          .readWriteRecords(props.records)
          .readBlobs(props.blobs),
      eventSource: { batchSize: 10, maxBatchingWindow: Duration.seconds(5) },
      alarmTopic: props.alarmTopic,
      alarms: {
        purpose: 'Judge drift watch (judge.verdict queue)',
        maxAgeSeconds: settings.alarms.queueAgeSeconds.modes,
        deadLetterHint:
          'judge.verdict events the drift watch failed on (or EventBridge could not deliver); read them in the SQS console, fix the cause, then redrive them to the drift-watch queue (SQS StartMessageMoveTask)',
      },
    });
    ({ queue: this.queue, deadLetterQueue: this.deadLetterQueue, rule: this.rule, consumer: this.consumer, alarms: this.alarms } = pipe);
  }
}
