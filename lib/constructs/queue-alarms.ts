import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { QueueWithDeadLetter } from './queue-with-dead-letter.ts';

export interface QueueAlarmsProps extends QueueWithDeadLetter<IQueue> {
  /** What the queue carries, for the alarm descriptions (`feedback ingestion`). */
  purpose: string;
  alarmTopic: ITopic;
  /** Age (seconds) of the queue's oldest message that raises its alarm. */
  maxAgeSeconds: number;
  /** Age (seconds) of the dead-letter queue's oldest message that raises its alarm. */
  deadLetterMaxAgeSeconds: number;
  /**
   * Dead-letter depth that raises an alarm; absent: none here (the ingestion dead-letter queue's depth alarm is the
   * Pipeline stack's `DeadLetterDepthAlarm`, kept where it was so its logical id stays).
   */
  deadLetterDepthThreshold?: number;
  /** What to do about a dead-lettered message, for the alarm description. */
  deadLetterHint: string;
}

/**
 * The alarms of one queue with a dead-letter queue (`addQueueWithDeadLetter`), to the alarm topic (alarm and OK): the age of the oldest message
 * in each (`ApproximateAgeOfOldestMessage`: a consumer stopped or falling behind, a dead letter about to expire), and
 * optionally the dead-letter depth. It adds alarms only, so it can live in another stack than the queues (the
 * feedback queues are in the Data stack, their alarms in the Pipeline stack).
 */
export class QueueAlarms extends Construct {
  readonly age: Alarm;
  readonly deadLetterAge: Alarm;
  readonly deadLetterDepth?: Alarm;

  constructor(scope: Construct, id: string, props: QueueAlarmsProps) {
    super(scope, id);
    const maximum = { period: Duration.minutes(1), statistic: 'Maximum' };
    const notify = (alarm: Alarm) => {
      alarm.addAlarmAction(new SnsAction(props.alarmTopic));
      alarm.addOkAction(new SnsAction(props.alarmTopic));
      return alarm;
    };
    this.age = notify(
      new Alarm(this, 'OldestMessageAlarm', {
        alarmDescription: `${props.purpose}: a message has waited over ${props.maxAgeSeconds} s in the queue; its consumer has stopped or cannot keep up (check its errors and throttles)`,
        metric: props.queue.metricApproximateAgeOfOldestMessage(maximum),
        threshold: props.maxAgeSeconds,
        // Five minutes over: one slow batch does not page anyone.
        evaluationPeriods: 5,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
    this.deadLetterAge = notify(
      new Alarm(this, 'DeadLetterOldestMessageAlarm', {
        alarmDescription: `${props.purpose}: a dead letter is over ${props.deadLetterMaxAgeSeconds} s old and will expire at the queue's retention: ${props.deadLetterHint}`,
        metric: props.deadLetterQueue.metricApproximateAgeOfOldestMessage(maximum),
        threshold: props.deadLetterMaxAgeSeconds,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
    if (props.deadLetterDepthThreshold !== undefined) {
      this.deadLetterDepth = notify(
        new Alarm(this, 'DeadLetterDepthAlarm', {
          alarmDescription: `${props.purpose}: messages in the dead-letter queue: ${props.deadLetterHint}`,
          metric: props.deadLetterQueue.metricApproximateNumberOfMessagesVisible(maximum),
          threshold: props.deadLetterDepthThreshold,
          evaluationPeriods: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }
  }
}
