import { Arn, ArnFormat, Duration, Stack, TimeZone, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as events from 'aws-cdk-lib/aws-events';
import * as eventTargets from 'aws-cdk-lib/aws-events-targets';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as schedulerTargets from 'aws-cdk-lib/aws-scheduler-targets';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { StageSettings } from '../../config/stages.ts';
import type { RecordsTable } from '../../constructs/records-table.ts';
import { FlywheelFunction } from '../../constructs/flywheel-function.ts';
import { stateMachineEnvName } from '../../drivers/aws/step-functions-workflows.ts';
import { CHECKPOINT_REGISTERED } from '../../registry/register-checkpoint.ts';
import { EVENT_SOURCE } from '../../ports/events.ts';
import { SWEEP_WORKFLOW } from '../workflow/sweep.asl.ts';
import { nagResourceLabel } from '../../constructs/nag-resource-label.ts';

export interface SweepTriggersProps {
  settings: StageSettings;
  stateMachine: sfn.IStateMachine;
  records: RecordsTable;
  bus: events.IEventBus;
  alarmTopic: ITopic;
  environment: Record<string, string>;
}

/**
 * What starts sweeps without a person: the stage's schedule (EventBridge Scheduler, nightly over the active suites and
 * the newest checkpoints) and a rule on the Flywheel bus for `checkpoint.registered`. Both invoke one function,
 * `functions/sweeps/start-sweep.ts`, which derives the sweep id from the trigger (so a delivery repeated by Scheduler
 * or EventBridge starts no second sweep) and starts the state machine through the workflows port.
 */
export class SweepTriggers extends Construct {
  readonly starter: FlywheelFunction;
  readonly schedule: scheduler.Schedule;
  readonly onCheckpoint: events.Rule;

  constructor(scope: Construct, id: string, props: SweepTriggersProps) {
    super(scope, id);
    const { settings } = props;
    this.starter = new FlywheelFunction(this, 'StartSweep', {
      lambda: 'sweeps/start-sweep',
      settings,
      timeout: Duration.seconds(30),
      environment: { ...props.environment, [stateMachineEnvName(SWEEP_WORKFLOW)]: props.stateMachine.stateMachineArn },
      description: `Flywheel: starts a sweep on the schedule or a registered checkpoint (${settings.stage})`,
    }).readWriteRecords(props.records);
    props.stateMachine.grantStartExecution(this.starter.role);
    // Redrive: a trigger delivered again for a sweep whose execution failed resumes it.
    props.stateMachine.grantExecution(this.starter.role, 'states:DescribeExecution', 'states:RedriveExecution');
    Validations.of(this.starter.role.node.findChild('DefaultPolicy')).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${nagResourceLabel(Stack.of(this), executionsOf(props.stateMachine))}:*]`,
      reason: 'DescribeExecution and RedriveExecution of the sweeps this function starts (an execution of this one state machine, named after the sweep id, which is known only at run time).',
    });
    this.starter.alarmOnErrors(props.alarmTopic, settings.alarms.handlerErrorThreshold);

    const schedulerRole = new iam.Role(this, 'SchedulerRole', {
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com'),
      description: `Flywheel ${settings.stage}: the nightly sweep schedule invokes the start-sweep function`,
    });
    this.schedule = new scheduler.Schedule(this, 'Nightly', {
      description: `Flywheel ${settings.stage}: nightly sweep over the active suites and the newest checkpoints`,
      schedule: scheduler.ScheduleExpression.expression(settings.sweepSchedule.expression, TimeZone.of(settings.sweepSchedule.timezone)),
      enabled: settings.sweepSchedule.enabled,
      target: new schedulerTargets.LambdaInvoke(this.starter.fn, {
        role: schedulerRole,
        input: scheduler.ScheduleTargetInput.fromObject({ trigger: 'schedule', scheduledTime: scheduler.ContextAttribute.scheduledTime }),
        retryAttempts: 5,
        maxEventAge: Duration.hours(2),
      }),
    });

    Validations.of(schedulerRole.node.findChild('DefaultPolicy')).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${nagResourceLabel(Stack.of(this), this.starter.fn.functionArn)}:*]`,
      reason: 'The Scheduler target grants invoke on the start-sweep function and its versions (the construct adds <arn>:*); it is this one function.',
    });

    this.onCheckpoint = new events.Rule(this, 'OnCheckpointRegistered', {
      description: 'A sweep over each newly registered checkpoint (unless it was registered with sweep: false)',
      eventBus: props.bus,
      eventPattern: { source: [EVENT_SOURCE], detailType: [CHECKPOINT_REGISTERED] },
      targets: [new eventTargets.LambdaFunction(this.starter.fn, { retryAttempts: 5, maxEventAge: Duration.hours(2) })],
    });
  }
}

/** The executions' ARN prefix as the state machine's grants build it (`…:execution:<machine name>`). */
function executionsOf(stateMachine: sfn.IStateMachine): string {
  const stack = Stack.of(stateMachine);
  return stack.formatArn({
    resource: 'execution',
    service: 'states',
    resourceName: Arn.split(stateMachine.stateMachineArn, ArnFormat.COLON_RESOURCE_NAME).resourceName,
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
}
