import { ArnFormat, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { StageSettings } from '../../config/stages.ts';
import type { FlywheelFunction } from '../../constructs/flywheel-function.ts';
import { stateMachineEnvName } from '../../drivers/aws/step-functions-workflows.ts';
import { nagResourceLabel } from '../../constructs/nag-resource-label.ts';
import { SWEEP_WORKFLOW } from '../workflow/sweep.asl.ts';

/**
 * The sweep state machine's name: `flywheel-<stage>-sweep`, as `SweepStateMachine` (lib/sweeps/infra) names it. The
 * API stack is built before the workflows stack, so it reaches the state machine by that name rather than by a
 * reference (`test/registry/sweeps-api-access.test.ts` holds the two together).
 */
export function sweepStateMachineName(settings: Pick<StageSettings, 'stage'>): string {
  return `flywheel-${settings.stage}-sweep`;
}

/**
 * Lets the sweeps API function start sweeps and describe their executions (`POST /v1/sweeps`, `GET /v1/sweeps/{id}`):
 * `states:StartExecution` on the sweep state machine, `states:DescribeExecution` and `states:RedriveExecution` (a
 * re-run of a failed sweep id) on its executions, and the
 * `FLYWHEEL_STATE_MACHINE_SWEEP` variable the Step Functions workflows driver reads.
 */
export function grantSweepExecutions(fn: FlywheelFunction, settings: Pick<StageSettings, 'stage'>): void {
  const stack = Stack.of(fn);
  const name = sweepStateMachineName(settings);
  const machine = stack.formatArn({ service: 'states', resource: 'stateMachine', resourceName: name, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
  const executions = stack.formatArn({ service: 'states', resource: 'execution', resourceName: `${name}:*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
  fn.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['states:StartExecution'], resources: [machine] }));
  // Redrive: starting a sweep id whose execution failed resumes it (lib/drivers/aws/step-functions-workflows.ts).
  fn.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['states:DescribeExecution', 'states:RedriveExecution'], resources: [executions] }));
  fn.fn.addEnvironment(stateMachineEnvName(SWEEP_WORKFLOW), machine);
  Validations.of(fn.role.node.findChild('DefaultPolicy')).acknowledge({
    id: `AwsSolutions-IAM5[Resource::${nagResourceLabel(stack, executions)}]`,
    reason: 'DescribeExecution and RedriveExecution of the sweeps this function starts: executions of this one state machine, named after sweep ids known only at run time.',
  });
}
