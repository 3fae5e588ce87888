import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, type Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { SWEEP_TIMEOUT_SECONDS } from '../workflow/sweep.asl.ts';
import type { SweepStateMachine } from './sweep-state-machine.ts';

export interface SweepExecutionAlarmsProps {
  sweep: SweepStateMachine;
  alarmTopic: ITopic;
}

/** Executions are counted per 5 minutes: one ending badly is enough (threshold 1), none is no news (missing = OK). */
const PER_FIVE_MINUTES = { period: Duration.minutes(5), statistic: 'Sum' } as const;

/** Which execution outcomes alarm, and what each one means for the sweep. */
const OUTCOMES = {
  Failed: { metric: (m: sfn.StateMachine) => m.metricFailed(PER_FIVE_MINUTES), what: 'failed (a step such as validate, plan or compare failed)' },
  TimedOut: { metric: (m: sfn.StateMachine) => m.metricTimedOut(PER_FIVE_MINUTES), what: `ran past the ${SWEEP_TIMEOUT_SECONDS / 3600} h sweep timeout` },
  Aborted: { metric: (m: sfn.StateMachine) => m.metricAborted(PER_FIVE_MINUTES), what: 'was stopped before it finished' },
} as const satisfies Record<string, { metric: (m: sfn.StateMachine) => Metric; what: string }>;

/**
 * Alarms on the sweep state machine's executions that end without reaching the `notify` step, so that no
 * `sweep.finished` is published and no notice goes out: ExecutionsFailed, ExecutionsTimedOut and ExecutionsAborted,
 * each at 1 or more in 5 minutes, to the alarm topic (and back to OK), like the functions' error alarms.
 * A sweep that reaches `notify` with failed shards is told by `SweepNotices` instead; its execution succeeds.
 */
export class SweepExecutionAlarms extends Construct {
  readonly alarms: Record<keyof typeof OUTCOMES, Alarm>;

  constructor(scope: Construct, id: string, props: SweepExecutionAlarmsProps) {
    super(scope, id);
    this.alarms = Object.fromEntries(
      Object.entries(OUTCOMES).map(([outcome, { metric, what }]) => {
        const alarm = new Alarm(this, `Executions${outcome}`, {
          alarmDescription:
            `A sweep execution ${what} before telling anyone. Find it in the Step Functions console ` +
            `(${props.sweep.stateMachineName}), then "flywheel sweep status <sweep id>"; "flywheel sweep start --sweep-id <sweep id>" resumes it.`,
          metric: metric(props.sweep.stateMachine),
          threshold: 1,
          evaluationPeriods: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        });
        alarm.addAlarmAction(new SnsAction(props.alarmTopic));
        alarm.addOkAction(new SnsAction(props.alarmTopic));
        return [outcome, alarm];
      }),
    ) as Record<keyof typeof OUTCOMES, Alarm>;
  }
}
