import type { StageSettings } from '../../config/stages.ts';
import type { FlywheelFunction } from '../../constructs/flywheel-function.ts';
import { grantExecutions } from '../../constructs/flywheel-state-machine.ts';
import { stateMachineEnvName } from '../../drivers/aws/step-functions-workflows.ts';
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
  grantExecutions(fn, {
    stateMachineName: sweepStateMachineName(settings),
    environmentVariable: stateMachineEnvName(SWEEP_WORKFLOW),
    // Redrive: starting a sweep id whose execution failed resumes it (lib/drivers/aws/step-functions-workflows.ts).
    actions: ['states:DescribeExecution', 'states:RedriveExecution'],
    reason: 'DescribeExecution and RedriveExecution of the sweeps this function starts: executions of this one state machine, named after sweep ids known only at run time.',
  });
}
