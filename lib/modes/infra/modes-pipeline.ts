import { Duration, Stack } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { addEventQueueConsumer, type EventConsumerWiring } from '../../constructs/event-queue-consumer.ts';
import { FlywheelFunction } from '../../constructs/flywheel-function.ts';
import type { QueueAlarms } from '../../constructs/queue-alarms.ts';
import { EVENT_SOURCE } from '../../ports/events.ts';
import { MODES_EVENT_TYPES } from '../consumers/classify-stored.ts';
import { bedrockModelIds, EMBEDDING_MODEL_ENV, JUDGE_MODEL_ENV } from '../modes-models.ts';

export interface ModesPipelineProps extends EventConsumerWiring {
  /** Model specs (`openai:<model>@<baseUrl>` | `bedrock:<id>`); absent: the local classifier alone. */
  judgeModel?: string;
  embeddingModel?: string;
}

/** Seconds the classify consumer may run (a judge call per unsure signal, up to 10 signals × 200 ids). */
const CLASSIFY_TIMEOUT_SECONDS = 120;

/**
 * The failure-mode consumer on AWS: a rule on the Flywheel bus sends `feedback.stored` and `report.stored` to an SQS
 * queue (with a dead-letter queue after the stage's receive count: `addQueueWithDeadLetter`), which feeds the
 * `modes/classify` function with partial batch failures. The queue buffers bursts and a judge endpoint that is
 * down, so no signal is lost. Alarms (`QueueAlarms`): the age of the oldest message in either queue and the
 * dead-letter depth.
 */
export class ModesPipeline extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  readonly classifier: FlywheelFunction;
  readonly rule: events.Rule;
  /** Age of the oldest message in the queue and its dead-letter queue, and the dead-letter depth. */
  readonly alarms: QueueAlarms;

  constructor(scope: Construct, id: string, props: ModesPipelineProps) {
    super(scope, id);
    const { settings } = props;
    const pipe = addEventQueueConsumer(this, {
      settings,
      // ≥ 6 × the consumer's timeout.
      queue: { visibilityTimeout: Duration.seconds(6 * CLASSIFY_TIMEOUT_SECONDS), retentionPeriod: Duration.days(4) },
      ruleId: 'OnStored',
      rule: {
        description: 'Every stored feedback event and report goes to the failure-mode classifier',
        eventBus: props.bus,
        eventPattern: { source: [EVENT_SOURCE], detailType: [...MODES_EVENT_TYPES] },
      },
      maxEventAge: Duration.hours(24),
      consumer: () =>
        new FlywheelFunction(this, 'Classify', {
          lambda: 'modes/classify',
          settings,
          memorySize: 1024,
          timeout: Duration.seconds(CLASSIFY_TIMEOUT_SECONDS),
          environment: {
            ...props.environment,
            ...(props.judgeModel ? { [JUDGE_MODEL_ENV]: props.judgeModel } : {}),
            ...(props.embeddingModel ? { [EMBEDDING_MODEL_ENV]: props.embeddingModel } : {}),
          },
          description: `Flywheel failure-mode classifier (${settings.stage}): local classifier, LLM judge, review queue, embeddings`,
        })
          .readWriteRecords(props.records)
          .readBlobs(props.blobs)
          .writeBlobs(props.blobs, 'modes/'),
      eventSource: { batchSize: 10, maxBatchingWindow: Duration.seconds(5) },
      alarmTopic: props.alarmTopic,
      alarms: {
        purpose: 'Failure-mode classification (modes queue)',
        maxAgeSeconds: settings.alarms.queueAgeSeconds.modes,
        deadLetterHint:
          'events the classifier failed on (or EventBridge could not deliver); read them in the SQS console, fix the cause, then redrive them to the modes queue (SQS StartMessageMoveTask)',
      },
    });
    ({ queue: this.queue, deadLetterQueue: this.deadLetterQueue, rule: this.rule, consumer: this.classifier, alarms: this.alarms } = pipe);
    grantBedrockModels(this.classifier, props.judgeModel, props.embeddingModel);
  }
}

/** InvokeModel on exactly the Bedrock foundation models the specs name (none for OpenAI-compatible endpoints). */
export function grantBedrockModels(fn: FlywheelFunction, ...specs: (string | undefined)[]): void {
  const ids = bedrockModelIds(...specs);
  if (ids.length === 0) return;
  const stack = Stack.of(fn);
  fn.role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['bedrock:InvokeModel'],
      resources: ids.map((id) => stack.formatArn({ service: 'bedrock', account: '', resource: 'foundation-model', resourceName: id })),
    }),
  );
}
