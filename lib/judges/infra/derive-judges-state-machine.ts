import { nagResourceLabel } from '../../constructs/nag-resource-label.ts';
import { ArnFormat, Duration, Size, Stack, Validations } from 'aws-cdk-lib';
import type * as batch from 'aws-cdk-lib/aws-batch';
import * as events from 'aws-cdk-lib/aws-events';
import * as eventTargets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { FlywheelFunction } from '../../constructs/flywheel-function.ts';
import { addFlywheelStateMachine, type WorkflowConstructProps } from '../../constructs/flywheel-state-machine.ts';
import { grantJobAccess, type JobAccess } from '../../constructs/job-access.ts';
import { JobImage } from '../../constructs/job-image.ts';
import { stateMachineEnvName } from '../../drivers/aws/step-functions-workflows.ts';
import { EVENT_SOURCE } from '../../ports/events.ts';
import { CHECKPOINT_REGISTERED } from '../../registry/register-checkpoint.ts';
import { judgePricingEnvironment } from '../derive/judge-runners.ts';
import { TRAINER_JOB_ATTEMPTS } from '../workflow/derive-retry-policies.ts';
import { DERIVE_STEP_TIMEOUT_SECONDS, DERIVE_WORKFLOW, deriveJudgesDefinition, TRAINER_JOB_TIMEOUT_SECONDS } from '../workflow/derive-judges.asl.ts';

/** The trainer's exit code for data it cannot train on (`flywheel_trainer/__main__.py`): no retry helps. */
export const TRAINER_BAD_INPUT_EXIT_CODE = 2;

/**
 * The trainer job's role: the derivations' blobs only (`judges/derivations/<id>/<name>/`: it reads the teacher's
 * training set and writes the model under `model/`); no records. Residual scope: a job may write the model of any
 * derivation; a model is calibrated against people before it can be promoted.
 */
export const TRAINER_JOB_ACCESS: JobAccess = {
  blobs: { read: ['judges/derivations/*'], write: ['judges/derivations/*'], denyWrite: [] },
  records: { read: [], write: [] },
};

export interface DeriveJudgesStateMachineProps extends WorkflowConstructProps {
  /** The CPU pool's fair-share queue (the trainer runs there under the `data-and-reward` share). */
  cpuJobQueueArn: string;
  /** The compute stack's job log group. */
  jobLogs: ILogGroup;
}

/**
 * The judge derivation on AWS (`lib/judges/workflow/derive-judges.asl.ts`): a Standard state machine whose steps run in
 * one function (`functions/judges/derive-step.ts`), the trainer image's Batch job definition (`batch-images/trainer`,
 * `JobImage`), and the rule on the Flywheel bus that starts a derivation for a checkpoint registered with
 * `topModel: true` (`functions/judges/derive-trigger.ts`, the execution named after the checkpoint).
 *
 * The trainer runs trusted code on data (no sandbox), so its container is not privileged (overriding `JobImage`'s
 * default for sandboxed jobs); it shares the CPU pool's instances with the forge's privileged jobs, and its role
 * reaches the derivations' blobs only (`TRAINER_JOB_ACCESS`).
 *
 * The step function calls the judges' models through the models port: the new top model's endpoint (HTTPS, no grant
 * needed); it has no Bedrock grant, so an incumbent judge on Bedrock must already have a calibration report on its
 * gold set (it is calibrated only when it has none).
 */
export class DeriveJudgesStateMachine extends Construct {
  readonly stateMachine: sfn.StateMachine;
  readonly step: FlywheelFunction;
  readonly starter: FlywheelFunction;
  readonly trainer: JobImage;
  readonly onTopCheckpoint: events.Rule;

  constructor(scope: Construct, id: string, props: DeriveJudgesStateMachineProps) {
    super(scope, id);
    const { settings } = props;
    const stack = Stack.of(this);
    const stateMachineName = `flywheel-${settings.stage}-${DERIVE_WORKFLOW}`;

    this.trainer = new JobImage(this, 'Trainer', {
      settings,
      name: 'trainer',
      vcpus: 2,
      memory: Size.gibibytes(4),
      environment: { FLYWHEEL_BUCKET: props.blobs.bucket.bucketName },
      logGroup: props.jobLogs,
      attemptTimeout: Duration.seconds(TRAINER_JOB_TIMEOUT_SECONDS),
      attempts: TRAINER_JOB_ATTEMPTS,
      badInputExitCode: TRAINER_BAD_INPUT_EXIT_CODE,
      description: 'Trainer: a small reward model distilled from a judge',
    });
    (this.trainer.jobDefinition.node.defaultChild as batch.CfnJobDefinition).addPropertyOverride('ContainerProperties.Privileged', false);
    grantJobAccess(this.trainer.jobRole, { blobs: props.blobs, records: props.records }, TRAINER_JOB_ACCESS);

    this.step = new FlywheelFunction(this, 'Step', {
      lambda: 'judges/derive-step',
      settings,
      timeout: Duration.seconds(DERIVE_STEP_TIMEOUT_SECONDS),
      memorySize: 1024,
      // The stage's judge prices: without them no derived judge can be shown cheaper, so none is promoted.
      environment: { ...props.environment, ...judgePricingEnvironment(settings.judges.pricing) },
      description: `Flywheel judge derivation steps (${settings.stage})`,
    })
      .readWriteRecords(props.records)
      .readBlobs(props.blobs)
      .writeBlobs(props.blobs, 'judges/')
      .publishEvents(props.bus);
    this.step.alarmOnErrors(props.alarmTopic, settings.alarms.handlerErrorThreshold);

    const definition = deriveJudgesDefinition({
      stepFunction: this.step.fn.functionArn,
      cpuJobQueue: props.cpuJobQueueArn,
      trainerJobDefinition: this.trainer.jobDefinition.jobDefinitionArn,
    });
    this.stateMachine = addFlywheelStateMachine(this, {
      settings,
      stateMachineName,
      definition,
      comment: 'Flywheel judge derivation (lib/judges/workflow/derive-judges.asl.ts)',
      roleDescription: `Judge derivation state machine of Flywheel ${settings.stage}`,
      invokes: [this.step.fn.functionArn],
      submitsTo: [props.cpuJobQueueArn, this.trainer.jobDefinition.jobDefinitionArn],
      job: 'trainer job',
    }).stateMachine;

    this.starter = new FlywheelFunction(this, 'Start', {
      lambda: 'judges/derive-trigger',
      settings,
      timeout: Duration.seconds(30),
      environment: { ...props.environment, [stateMachineEnvName(DERIVE_WORKFLOW)]: this.stateMachine.stateMachineArn },
      description: `Flywheel: starts a judge derivation for a checkpoint registered as the top model (${settings.stage})`,
    });
    this.stateMachine.grantStartExecution(this.starter.role);
    const executions = stack.formatArn({ service: 'states', resource: 'execution', resourceName: `${stateMachineName}:*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
    this.starter.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['states:DescribeExecution', 'states:RedriveExecution'], resources: [executions] }));
    Validations.of(this.starter.role.node.findChild('DefaultPolicy')).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${nagResourceLabel(stack, executions)}]`,
      reason: 'DescribeExecution and RedriveExecution of the derivations this function starts (executions of this one state machine, named after the checkpoint at run time).',
    });
    this.starter.alarmOnErrors(props.alarmTopic, settings.alarms.handlerErrorThreshold);

    this.onTopCheckpoint = new events.Rule(this, 'OnTopCheckpoint', {
      description: 'A judge derivation for each checkpoint registered as the new top model',
      eventBus: props.bus,
      eventPattern: { source: [EVENT_SOURCE], detailType: [CHECKPOINT_REGISTERED], detail: { topModel: [true] } },
      targets: [new eventTargets.LambdaFunction(this.starter.fn, { retryAttempts: 5, maxEventAge: Duration.hours(2) })],
    });
  }
}

