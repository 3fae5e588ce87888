import { ArnFormat, Duration, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { FlywheelFunction } from '../../constructs/flywheel-function.ts';
import { addFlywheelStateMachine, type WorkflowConstructProps } from '../../constructs/flywheel-state-machine.ts';
import { LAMBDA_STEP_TIMEOUT_SECONDS, sweepDefinition } from '../workflow/sweep.asl.ts';
import { ROLLOUT_JOB_DEFINITION_VARIABLE, SWEEP_STEP_NAMES, type SweepStepName } from '../workflow/sweep-steps.ts';
import type { JobImage } from '../../constructs/job-image.ts';
import { sweepStateMachineName } from './grant-sweep-executions.ts';
import { nagResourceLabel } from '../../constructs/nag-resource-label.ts';

export interface SweepStateMachineProps extends WorkflowConstructProps {
  gpuJobQueueArn: string;
  /**
   * The rollout image (`lib/constructs/job-image.ts`): plan-shards registers its clones per environment image and
   * the state machine submits shards to them.
   */
  rollout: Pick<JobImage, 'jobDefinition' | 'imageDefinitionArns' | 'grantRegisterImageDefinitions'>;
}

/** How long each step's Lambda may run: aggregation reads a shard's attempt records; the rest are a few writes. */
const STEP_TIMEOUT_SECONDS: Record<SweepStepName, number> = {
  'validate-sweep': 60,
  'plan-shards': 300,
  'aggregate-shard': 300,
  'record-shard-failure': 60,
  'compare-incumbent': 300,
  'check-saturation': 120,
  notify: 60,
};

/**
 * The sweep state machine (Standard): the definition `sweepDefinition` renders with the tokens of this stack's step
 * functions and the compute stack's GPU queue and rollout job definition, one house function per step
 * (`functions/sweeps/<step>.ts`), logs of every event to CloudWatch and X-Ray tracing.
 *
 * The role can invoke the seven step functions; submit to the one queue with the rollout job definition and its
 * clones per environment image (which only the plan-shards function may register); describe and
 * terminate jobs and manage the rule Step Functions uses to wait on Batch (`.sync`); and start, describe, stop and
 * redrive the child executions of its own Distributed Map.
 *
 * Why an ASL document rather than CDK's state classes (`LambdaInvoke`, `Map`, and a `CustomState` for the Batch task,
 * since `BatchSubmitJob` cannot set a ShareIdentifier): the local runtime must run the very definition deployed, and
 * render it at `npm start` without synthesizing a CDK app. CDK's task classes write `arn:${AWS::Partition}:…` joins
 * and default Lambda retries that only CloudFormation resolves, so their output is not runnable as it stands. Here the
 * whole definition is what a CustomState holds, ASL, written once in `sweep.asl.ts` and given this stack's tokens;
 * `test/workflow/definitions.test.ts` checks that the template's definition is the local one, ARNs aside, and
 * `test/workflow/` runs the synthesized one locally.
 */
export class SweepStateMachine extends Construct {
  readonly stateMachine: sfn.StateMachine;
  readonly steps: Record<SweepStepName, FlywheelFunction>;
  readonly stateMachineName: string;

  constructor(scope: Construct, id: string, props: SweepStateMachineProps) {
    super(scope, id);
    const { settings } = props;
    const stack = Stack.of(this);
    this.stateMachineName = sweepStateMachineName(settings);

    this.steps = Object.fromEntries(
      SWEEP_STEP_NAMES.map((step) => {
        const fn = new FlywheelFunction(this, stepId(step), {
          lambda: `sweeps/${step}`,
          settings,
          timeout: Duration.seconds(Math.min(STEP_TIMEOUT_SECONDS[step], LAMBDA_STEP_TIMEOUT_SECONDS)),
          environment: props.environment,
          description: `Flywheel sweep step ${step} (${settings.stage})`,
        })
          .readWriteRecords(props.records)
          .readBlobs(props.blobs)
          .writeBlobs(props.blobs, 'sweeps/')
          .publishEvents(props.bus);
        fn.alarmOnErrors(props.alarmTopic, settings.alarms.handlerErrorThreshold);
        return [step, fn];
      }),
    ) as Record<SweepStepName, FlywheelFunction>;

    // plan-shards registers the rollout definition's clone for each environment image its tasks name (the shard's
    // ShardRef.jobDefinition); nothing else of the sweep registers, tags or passes roles.
    const plan = this.steps['plan-shards'];
    const rolloutJobDefinitionArn = props.rollout.jobDefinition.jobDefinitionArn;
    const { imageDefinitionArns } = props.rollout;
    plan.fn.addEnvironment(ROLLOUT_JOB_DEFINITION_VARIABLE, rolloutJobDefinitionArn);
    props.rollout.grantRegisterImageDefinitions(plan.role);
    const planPolicy = plan.role.node.tryFindChild('DefaultPolicy');
    if (planPolicy) {
      Validations.of(planPolicy).acknowledge(
        {
          id: 'AwsSolutions-IAM5[Resource::*]',
          reason:
            'batch:DescribeJobDefinitions supports no resource-level permission (plan-shards looks up the rollout definition and its clones per environment image); X-Ray likewise. Every other statement names its resources.',
        },
        {
          id: `AwsSolutions-IAM5[Resource::${nagResourceLabel(stack, imageDefinitionArns)}]`,
          reason:
            "plan-shards registers (and tags while registering) one clone of the rollout job definition per task environment image, named <rollout definition>-env-<hash of the image> by the driver at run time: granted on those names of this stage's rollout definition only; iam:PassRole names the rollout job and execution roles exactly.",
        },
      );
    }

    const definition = sweepDefinition({
      functions: Object.fromEntries(SWEEP_STEP_NAMES.map((step) => [step, this.steps[step].fn.functionArn])) as Record<SweepStepName, string>,
      gpuJobQueue: props.gpuJobQueueArn,
      rolloutJobDefinition: rolloutJobDefinitionArn,
    });

    // The rollout definition, and its clones per environment image that plan-shards registered (ShardRef.jobDefinition).
    const submitsTo = [props.gpuJobQueueArn, rolloutJobDefinitionArn, imageDefinitionArns];
    const ownArn = stack.formatArn({ service: 'states', resource: 'stateMachine', resourceName: this.stateMachineName, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
    const childExecutions = stack.formatArn({ service: 'states', resource: 'execution', resourceName: `${this.stateMachineName}:*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
    // A Distributed Map's child executions are named `<machine>/<map run label>:<id>`: describe and stop them, and
    // redrive them when a redrive of the parent (a re-run of the sweep id) redrives a failed Map Run.
    const mapRunExecutions = stack.formatArn({ service: 'states', resource: 'execution', resourceName: `${this.stateMachineName}/*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME });

    // The execution timeout is the definition's own TimeoutSeconds (SWEEP_TIMEOUT_SECONDS), as the local runtime runs it.
    this.stateMachine = addFlywheelStateMachine(this, {
      settings,
      stateMachineName: this.stateMachineName,
      definition,
      comment: 'Flywheel eval sweep (lib/sweeps/workflow/sweep.asl.ts)',
      roleDescription: `Sweep state machine of Flywheel ${settings.stage}`,
      invokes: SWEEP_STEP_NAMES.map((step) => this.steps[step].fn.functionArn),
      submitsTo,
      job: 'Batch job',
      statements: [
        new iam.PolicyStatement({ actions: ['states:StartExecution'], resources: [ownArn] }),
        new iam.PolicyStatement({ actions: ['states:DescribeExecution', 'states:StopExecution'], resources: [childExecutions, mapRunExecutions] }),
        new iam.PolicyStatement({ actions: ['states:RedriveExecution'], resources: [mapRunExecutions] }),
      ],
      acknowledgements: [
        {
          id: `AwsSolutions-IAM5[Resource::${nagResourceLabel(stack, imageDefinitionArns)}]`,
          reason:
            "A shard whose tasks name an environment image is submitted under the rollout definition's clone for that image (<rollout definition>-env-<hash>, registered by plan-shards at run time): SubmitJob is granted on those clones of this stage's rollout definition, with the one GPU queue.",
        },
        {
          id: `AwsSolutions-IAM5[Resource::${nagResourceLabel(stack, childExecutions)}]`,
          reason:
            'The Distributed Map starts child executions whose names Step Functions chooses: describe and stop are granted on the executions of this one state machine.',
        },
        {
          id: `AwsSolutions-IAM5[Resource::${nagResourceLabel(stack, mapRunExecutions)}]`,
          reason:
            "A Distributed Map's child executions (<machine>/<map run label>:<id>, named by Step Functions): describe, stop and redrive are granted on the map runs of this one state machine.",
        },
      ],
    }).stateMachine;
  }
}

/** `validate-sweep` → `ValidateSweep`. */
function stepId(step: string): string {
  return step
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}
