import { Arn, ArnFormat, Duration, Stack, Validations } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import type * as ecr from 'aws-cdk-lib/aws-ecr';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as schedulerTargets from 'aws-cdk-lib/aws-scheduler-targets';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { FlywheelFunction } from '../../constructs/flywheel-function.ts';
import { addFlywheelStateMachine, alarmOnExecutions, type WorkflowConstructProps } from '../../constructs/flywheel-state-machine.ts';
import { nagResourceLabel } from '../../constructs/nag-resource-label.ts';
import { stateMachineEnvName } from '../../drivers/aws/step-functions-workflows.ts';
import { STALL_CHECK_JOB_QUEUE_ENV } from '../runs/check-stalled-runs.ts';
import { TRAIN_STEP_TIMEOUT_SECONDS, TRAIN_WORKFLOW, trainDefinition } from '../workflow/train.asl.ts';
import { synthCodeVersion } from './code-version.ts';
import { trainStateMachineName } from './grant-training-executions.ts';
import { PolicyTrainerJob } from './policy-trainer-job.ts';

/** How often the stall check looks at running runs' heartbeats (a run's `stallMinutes` is at least 1). */
export const STALL_CHECK_RATE_MINUTES = 5;

export interface TrainStateMachineProps extends WorkflowConstructProps {
  /** The GPU pool's fair-share queue (the trainer runs there under the `training` share). */
  gpuJobQueueArn: string;
  /** The trainer image's repository (`batch-images/trainer`). */
  trainerRepository: ecr.IRepository;
  /** The compute stack's job log group. */
  jobLogs: ILogGroup;
  /** The sweep state machine, which the workflow starts for the new checkpoint, and its workflow name (`sweep`). */
  sweep: { stateMachine: sfn.IStateMachine; workflow: string };
}

/**
 * Training runs on AWS (`lib/training/workflow/train.asl.ts`): a Standard state machine whose steps run in one function
 * (`functions/training/train-step.ts`: build the dataset, record the run, register the checkpoint, sweep it, compare,
 * propose), the policy trainer on the GPU pool (`PolicyTrainerJob`: a container definition and, for more than one node,
 * a multi-node parallel one), the stall check every few minutes (`functions/training/stall-check.ts`: people are told
 * when a run's heartbeat, its metrics file, goes quiet), and alarms on executions that fail or time out.
 *
 * Who hears of a failure or a stall, by channel (each carries one kind of message):
 * - people, per run: the notice of the step or check that saw it (RecordFailure, the stall check's stall or orphan),
 *   one id per failure (`training.run.finished:<run>:failed:<resumes>`), raised as a notice (`raiseNotice`: stored once,
 *   logged, sent to Slack with a resume button and to the bus as `notice.raised`, which `OnNoticeRaised` of
 *   `lib/people/infra/notices.ts` sends to the alarm topic: e-mail subscribers, the stage's chat channel): the one path a
 *   person acts on, with the resume command. `training.run.stalled` and `training.run.finished` are still published on
 *   the bus; no rule sends them to the topic as well (that told people twice).
 * - operators, in aggregate: the `ExecutionsFailed`/`ExecutionsTimedOut` alarms (a count per 5 min, OK when it
 *   clears) and each function's error alarm: the state of the machinery, not of one run; they name no run.
 * A run stopped by a person (`POST /v1/training-runs/{runId}/stop`) ends its execution as aborted: no alarm, since a
 * person did it.
 */
export class TrainStateMachine extends Construct {
  readonly stateMachine: sfn.StateMachine;
  readonly stateMachineName: string;
  readonly step: FlywheelFunction;
  readonly stallCheck: FlywheelFunction;
  readonly trainer: PolicyTrainerJob;
  readonly schedule: scheduler.Schedule;
  /** On executions that fail or time out; not on aborted ones, which a person stopped. */
  readonly alarms: Record<'Failed' | 'TimedOut', Alarm>;

  constructor(scope: Construct, id: string, props: TrainStateMachineProps) {
    super(scope, id);
    const { settings } = props;
    const stack = Stack.of(this);
    this.stateMachineName = trainStateMachineName(settings);

    this.trainer = new PolicyTrainerJob(this, 'PolicyTrainer', {
      settings,
      repository: props.trainerRepository,
      blobs: props.blobs,
      records: props.records,
      logGroup: props.jobLogs,
      environment: { FLYWHEEL_BUCKET: props.blobs.bucket.bucketName },
    });

    this.step = new FlywheelFunction(this, 'Step', {
      lambda: 'training/train-step',
      settings,
      timeout: Duration.seconds(TRAIN_STEP_TIMEOUT_SECONDS),
      memorySize: 2048,
      environment: props.environment,
      description: `Flywheel training run steps (${settings.stage})`,
    })
      .readWriteRecords(props.records)
      .readBlobs(props.blobs)
      .writeBlobs(props.blobs, 'training/')
      .publishEvents(props.bus);
    this.step.alarmOnErrors(props.alarmTopic, settings.alarms.handlerErrorThreshold);
    // The checkpoints' lineage: the code that synthesized this deployment, the trainer image its jobs run.
    this.step.fn.addEnvironment('FLYWHEEL_CODE_VERSION', synthCodeVersion());
    this.step.fn.addEnvironment('FLYWHEEL_TRAINER_IMAGE', this.trainer.image);
    // The checkpoint.registered trigger sweeps the new checkpoint; the workflow waits on that sweep (reads its execution).
    const sweepMachineName = Arn.split(props.sweep.stateMachine.stateMachineArn, ArnFormat.COLON_RESOURCE_NAME).resourceName;
    const sweepExecutions = stack.formatArn({ service: 'states', resource: 'execution', resourceName: `${sweepMachineName}:*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
    this.step.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['states:DescribeExecution'], resources: [sweepExecutions] }));
    this.step.fn.addEnvironment(stateMachineEnvName(props.sweep.workflow), props.sweep.stateMachine.stateMachineArn);

    const definition = trainDefinition({
      stepFunction: this.step.fn.functionArn,
      gpuJobQueue: props.gpuJobQueueArn,
      trainerJobDefinition: this.trainer.single.jobDefinitionArn,
      trainerMultiNodeJobDefinition: this.trainer.multiNode.jobDefinitionArn,
    });
    this.stateMachine = addFlywheelStateMachine(this, {
      settings,
      stateMachineName: this.stateMachineName,
      definition,
      comment: 'Flywheel training run (lib/training/workflow/train.asl.ts)',
      roleDescription: `Training state machine of Flywheel ${settings.stage}`,
      invokes: [this.step.fn.functionArn],
      submitsTo: [props.gpuJobQueueArn, this.trainer.single.jobDefinitionArn, this.trainer.multiNode.jobDefinitionArn],
      // A person stopping a run stops its execution, and Step Functions stops the .sync job with TerminateJob.
      job: 'trainer job',
    }).stateMachine;
    Validations.of(this.step.role.node.findChild('DefaultPolicy')).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${nagResourceLabel(stack, sweepExecutions)}]`,
      reason: "DescribeExecution of the sweep of a run's checkpoint: executions of the one sweep state machine, named after sweep ids known only at run time.",
    });

    this.stallCheck = new FlywheelFunction(this, 'StallCheck', {
      lambda: 'training/stall-check',
      settings,
      timeout: Duration.seconds(60),
      environment: props.environment,
      description: `Flywheel: tells people about training runs whose heartbeat stopped (${settings.stage})`,
    })
      .readWriteRecords(props.records)
      .readBlobs(props.blobs)
      .publishEvents(props.bus);
    // Jobs waiting for capacity are not stalls (ListJobs/DescribeJobs on the GPU queue); executions that ended under
    // a non-terminal run fail it (DescribeExecution of the training executions).
    this.stallCheck.fn.addEnvironment(STALL_CHECK_JOB_QUEUE_ENV, props.gpuJobQueueArn);
    this.stallCheck.fn.addEnvironment(stateMachineEnvName(TRAIN_WORKFLOW), this.stateMachine.stateMachineArn);
    this.stallCheck.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['batch:ListJobs', 'batch:DescribeJobs'], resources: ['*'] }));
    const trainExecutions = stack.formatArn({ service: 'states', resource: 'execution', resourceName: `${this.stateMachineName}:*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
    this.stallCheck.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['states:DescribeExecution'], resources: [trainExecutions] }));
    Validations.of(this.stallCheck.role.node.findChild('DefaultPolicy')).acknowledge(
      { id: 'AwsSolutions-IAM5[Resource::*]', reason: 'batch:ListJobs and batch:DescribeJobs support no resource-level permission; the check reads the GPU queue only.' },
      {
        id: `AwsSolutions-IAM5[Resource::${nagResourceLabel(stack, trainExecutions)}]`,
        reason: 'DescribeExecution of the training executions: named after run ids known only at run time.',
      },
    );
    this.stallCheck.alarmOnErrors(props.alarmTopic, settings.alarms.handlerErrorThreshold);
    const schedulerRole = new iam.Role(this, 'SchedulerRole', {
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com'),
      description: `Flywheel ${settings.stage}: the stall-check schedule invokes the training stall-check function`,
    });
    this.schedule = new scheduler.Schedule(this, 'StallCheckSchedule', {
      description: `Flywheel ${settings.stage}: looks for stalled training runs every ${STALL_CHECK_RATE_MINUTES} minutes`,
      schedule: scheduler.ScheduleExpression.rate(Duration.minutes(STALL_CHECK_RATE_MINUTES)),
      target: new schedulerTargets.LambdaInvoke(this.stallCheck.fn, {
        role: schedulerRole,
        input: scheduler.ScheduleTargetInput.fromObject({ trigger: 'schedule', scheduledTime: scheduler.ContextAttribute.scheduledTime }),
        retryAttempts: 2,
        maxEventAge: Duration.minutes(STALL_CHECK_RATE_MINUTES),
      }),
    });
    Validations.of(schedulerRole.node.findChild('DefaultPolicy')).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${nagResourceLabel(stack, this.stallCheck.fn.functionArn)}:*]`,
      reason: 'The Scheduler target grants invoke on the stall-check function and its versions (the construct adds <arn>:*); it is this one function.',
    });

    const describe = (what: string) =>
      `A training run's execution ${what}. Find it in the Step Functions console (${this.stateMachineName}), then ` +
      '"flywheel train status <run id>"; "flywheel train resume <run id>" continues it from its last saved state.';
    this.alarms = alarmOnExecutions(this, this.stateMachine, props.alarmTopic, { Failed: describe('failed'), TimedOut: describe('timed out') });
  }
}
