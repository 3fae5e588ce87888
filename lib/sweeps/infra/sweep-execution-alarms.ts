import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { alarmOnExecutions } from '../../constructs/flywheel-state-machine.ts';
import { SWEEP_TIMEOUT_SECONDS } from '../workflow/sweep.asl.ts';
import type { SweepStateMachine } from './sweep-state-machine.ts';

export interface SweepExecutionAlarmsProps {
  sweep: SweepStateMachine;
  alarmTopic: ITopic;
}

/** Which execution outcomes alarm, and what each one means for the sweep. */
const OUTCOMES = {
  Failed: 'failed (a step such as validate, plan or compare failed)',
  TimedOut: `ran past the ${SWEEP_TIMEOUT_SECONDS / 3600} h sweep timeout`,
  Aborted: 'was stopped before it finished',
} as const;

/**
 * Alarms on the sweep state machine's executions that end without reaching the `notify` step, so that no
 * `sweep.finished` is published and no notice goes out: ExecutionsFailed, ExecutionsTimedOut and ExecutionsAborted,
 * each at 1 or more in 5 minutes, to the alarm topic (and back to OK), like the functions' error alarms
 * (`alarmOnExecutions`). A sweep that reaches `notify` with failed shards is told by its notice instead (a warning or
 * an alert, which reaches the alarm topic through `notice.raised`); its execution succeeds.
 */
export class SweepExecutionAlarms extends Construct {
  readonly alarms: Record<keyof typeof OUTCOMES, Alarm>;

  constructor(scope: Construct, id: string, props: SweepExecutionAlarmsProps) {
    super(scope, id);
    const describe = (what: string) =>
      `A sweep execution ${what} before telling anyone. Find it in the Step Functions console ` +
      `(${props.sweep.stateMachineName}), then "flywheel sweep status <sweep id>"; "flywheel sweep start --sweep-id <sweep id>" resumes it.`;
    this.alarms = alarmOnExecutions(this, props.sweep.stateMachine, props.alarmTopic, {
      Failed: describe(OUTCOMES.Failed),
      TimedOut: describe(OUTCOMES.TimedOut),
      Aborted: describe(OUTCOMES.Aborted),
    });
  }
}
