import type { StageSettings } from '../../config/stages.ts';
import type { FlywheelFunction } from '../../constructs/flywheel-function.ts';
import { grantExecutions } from '../../constructs/flywheel-state-machine.ts';
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
  grantExecutions(fn, {
    stateMachineName: trainStateMachineName(settings),
    environmentVariable: stateMachineEnvName(TRAIN_WORKFLOW),
    actions: ['states:DescribeExecution', 'states:RedriveExecution', 'states:StopExecution'],
    reason: 'Describe, redrive and stop the training runs this function starts: executions of this one state machine, named after run ids known only at run time.',
  });
}
