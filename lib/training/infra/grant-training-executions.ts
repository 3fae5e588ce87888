import { ArnFormat, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { StageSettings } from '../../config/stages.ts';
import type { FlywheelFunction } from '../../constructs/flywheel-function.ts';
import { nagResourceLabel } from '../../constructs/nag-resource-label.ts';
import { stateMachineEnvName } from '../../drivers/aws/step-functions-workflows.ts';
import { TRAIN_WORKFLOW } from '../workflow/train.asl.ts';

/**
 * The training state machine's name: `flywheel-<stage>-train`, as `TrainStateMachine` names it. The API stack is built
 * before the workflows stack, so it reaches the state machine by that name rather than by a reference
 * (`test/training/training-infra.test.ts` holds the two together).
 */
export function trainStateMachineName(settings: Pick<StageSettings, 'stage'>): string {
  return `flywheel-${settings.stage}-${TRAIN_WORKFLOW}`;
}

/**
 * Lets a function start, describe, resume (redrive) and stop training runs' executions (`POST /v1/training-runs`, its
 * stop and resume): `states:StartExecution` on the training state machine, the rest on its executions, and the
 * `FLYWHEEL_STATE_MACHINE_TRAIN` variable the Step Functions workflows driver reads. Stopping an execution stops its
 * `.sync` trainer job too (Step Functions terminates it with its own role).
 */
export function grantTrainingExecutions(fn: FlywheelFunction, settings: Pick<StageSettings, 'stage'>): void {
  const stack = Stack.of(fn);
  const name = trainStateMachineName(settings);
  const machine = stack.formatArn({ service: 'states', resource: 'stateMachine', resourceName: name, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
  const executions = stack.formatArn({ service: 'states', resource: 'execution', resourceName: `${name}:*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
  fn.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['states:StartExecution'], resources: [machine] }));
  fn.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['states:DescribeExecution', 'states:RedriveExecution', 'states:StopExecution'], resources: [executions] }));
  fn.fn.addEnvironment(stateMachineEnvName(TRAIN_WORKFLOW), machine);
  Validations.of(fn.role.node.findChild('DefaultPolicy')).acknowledge({
    id: `AwsSolutions-IAM5[Resource::${nagResourceLabel(stack, executions)}]`,
    reason: 'Describe, redrive and stop the training runs this function starts: executions of this one state machine, named after run ids known only at run time.',
  });
}
