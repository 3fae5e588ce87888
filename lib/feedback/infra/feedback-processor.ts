import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import {
  INGEST_BATCH_SIZE,
  INGEST_MAX_BATCHING_WINDOW_SECONDS,
  INGEST_PROCESSOR_TIMEOUT_SECONDS,
} from '../../config/ingest-timing.ts';
import type { StageSettings } from '../../config/stages.ts';
import type { ArtifactsBucket } from '../../constructs/artifacts-bucket.ts';
import { FlywheelFunction } from '../../constructs/flywheel-function.ts';
import { QueueAlarms } from '../../constructs/queue-alarms.ts';
import type { RecordsTable } from '../../constructs/records-table.ts';
import type { IngestQueue } from './ingest-queue.ts';

export interface FeedbackProcessorProps {
  settings: StageSettings;
  records: RecordsTable;
  blobs: ArtifactsBucket;
  ingest: IngestQueue;
  bus: IEventBus;
  alarmTopic: ITopic;
  /** The functions' shared variables (`functionEnvironment`). */
  environment: Record<string, string>;
}

export interface FeedbackProcessor {
  processor: FlywheelFunction;
  /** Depth of the ingestion dead-letter queue. */
  deadLetterAlarm: Alarm;
  /** Age of the oldest message in the ingestion queue and its dead-letter queue. */
  ageAlarms: QueueAlarms;
}

/**
 * The consumer side of feedback ingestion: the `feedback/process` function on the ingestion queue (partial batch
 * failures), which stores records and the raw archive and publishes `feedback.stored`, with its error alarm, the
 * dead-letter depth alarm and the queues' age alarms, all to the alarm topic.
 *
 * The parts are created in `scope` itself under the ids the Pipeline stack has always given them (`Processor`,
 * `DeadLetterDepthAlarm`, `IngestQueueAlarms`), so moving them here changed no logical id.
 *
 * @example
 * const feedback = addFeedbackProcessor(this, { settings, records, blobs, ingest, bus, alarmTopic, environment });
 * feedback.processor.fn; // the Lambda function
 */
export function addFeedbackProcessor(scope: Construct, props: FeedbackProcessorProps): FeedbackProcessor {
  const { settings, ingest, alarmTopic } = props;
  const processor = new FlywheelFunction(scope, 'Processor', {
    lambda: 'feedback/process',
    settings,
    timeout: Duration.seconds(INGEST_PROCESSOR_TIMEOUT_SECONDS),
    environment: props.environment,
    description: `Flywheel feedback processor (${settings.stage}): queue to records, raw archive and feedback.stored`,
  })
    .readWriteRecords(props.records)
    .readBlobs(props.blobs)
    .writeBlobs(props.blobs)
    .publishEvents(props.bus);
  processor.fn.addEventSource(
    new SqsEventSource(ingest.queue, {
      batchSize: INGEST_BATCH_SIZE,
      maxBatchingWindow: Duration.seconds(INGEST_MAX_BATCHING_WINDOW_SECONDS),
      reportBatchItemFailures: true,
    }),
  );
  processor.alarmOnErrors(alarmTopic, settings.alarms.handlerErrorThreshold);

  const deadLetterAlarm = new Alarm(scope, 'DeadLetterDepthAlarm', {
    alarmDescription: `Feedback messages in the dead-letter queue: inspect with "flywheel dlq list", replay with "flywheel dlq redrive"`,
    metric: ingest.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
      period: Duration.minutes(1),
      statistic: 'Maximum',
    }),
    threshold: settings.alarms.deadLetterDepthThreshold,
    evaluationPeriods: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
  deadLetterAlarm.addAlarmAction(new SnsAction(alarmTopic));
  deadLetterAlarm.addOkAction(new SnsAction(alarmTopic));
  const ageAlarms = new QueueAlarms(scope, 'IngestQueueAlarms', {
    purpose: 'Feedback ingestion',
    queue: ingest.queue,
    deadLetterQueue: ingest.deadLetterQueue,
    alarmTopic,
    maxAgeSeconds: settings.alarms.queueAgeSeconds.ingest,
    deadLetterMaxAgeSeconds: settings.alarms.queueAgeSeconds.deadLetter,
    deadLetterHint: 'inspect with "flywheel dlq list", replay with "flywheel dlq redrive"',
  });
  return { processor, deadLetterAlarm, ageAlarms };
}
