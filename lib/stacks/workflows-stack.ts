import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import type { StageSettings } from '../config/stages.ts';
import { DeriveJudgesStateMachine } from '../judges/infra/derive-judges-state-machine.ts';
import { SweepExecutionAlarms } from '../sweeps/infra/sweep-execution-alarms.ts';
import { SweepNotices } from '../sweeps/infra/sweep-notices.ts';
import { SweepStateMachine } from '../sweeps/infra/sweep-state-machine.ts';
import { SweepTriggers } from '../sweeps/infra/sweep-triggers.ts';
import { SWEEP_WORKFLOW } from '../sweeps/workflow/sweep.asl.ts';
import { TrainStateMachine } from '../training/infra/train-state-machine.ts';
import type { ComputeStack } from './compute-stack.ts';
import type { DataStack } from './data-stack.ts';
import { functionEnvironment } from './function-environment.ts';

export interface WorkflowsStackProps extends StackProps {
  settings: StageSettings;
  data: DataStack;
  compute: ComputeStack;
  bus: IEventBus;
  alarmTopic: ITopic;
}

/**
 * The stateless workflows stack: the sweep state machine with its step functions, its schedule and its checkpoint
 * rule; what tells people about sweeps on AWS: alarms on executions that fail, time out or are stopped, and the rules
 * that route `suite.saturated` and unsuccessful `sweep.finished` to the alarm topic.
 */
export class WorkflowsStack extends Stack {
  readonly sweep: SweepStateMachine;
  readonly sweepTriggers: SweepTriggers;
  readonly sweepAlarms: SweepExecutionAlarms;
  readonly sweepNotices: SweepNotices;
  /** The judge derivation started by a top checkpoint (lib/judges/infra/derive-judges-state-machine.ts). */
  readonly deriveJudges: DeriveJudgesStateMachine;
  /** Training runs (lib/training/infra/train-state-machine.ts): the trainer image is the derivation's repository. */
  readonly training: TrainStateMachine;

  constructor(scope: Construct, id: string, props: WorkflowsStackProps) {
    super(scope, id, props);
    const { settings, data, compute } = props;
    const environment = functionEnvironment(data, props.bus);
    // What each workflow construct is given (`WorkflowConstructProps`).
    const workflow = { settings, records: data.records, blobs: data.blobs, bus: props.bus, alarmTopic: props.alarmTopic, environment };
    this.sweep = new SweepStateMachine(this, 'Sweep', {
      ...workflow,
      gpuJobQueueArn: compute.gpu.queue.jobQueueArn,
      rollout: compute.rollout,
    });
    this.sweepTriggers = new SweepTriggers(this, 'SweepTriggers', {
      settings,
      stateMachine: this.sweep.stateMachine,
      records: data.records,
      bus: props.bus,
      alarmTopic: props.alarmTopic,
      environment,
    });
    this.sweepAlarms = new SweepExecutionAlarms(this, 'SweepExecutionAlarms', { sweep: this.sweep, alarmTopic: props.alarmTopic });
    this.sweepNotices = new SweepNotices(this, 'SweepNotices', { bus: props.bus, alarmTopic: props.alarmTopic });
    this.deriveJudges = new DeriveJudgesStateMachine(this, 'DeriveJudges', {
      ...workflow,
      cpuJobQueueArn: compute.cpu.queue.jobQueueArn,
      jobLogs: compute.jobLogs,
    });
    this.training = new TrainStateMachine(this, 'Training', {
      ...workflow,
      gpuJobQueueArn: compute.gpu.queue.jobQueueArn,
      trainerRepository: this.deriveJudges.trainer.repository,
      jobLogs: compute.jobLogs,
      sweep: { stateMachine: this.sweep.stateMachine, workflow: SWEEP_WORKFLOW },
    });
    new CfnOutput(this, 'SweepStateMachineArn', {
      value: this.sweep.stateMachine.stateMachineArn,
      description: 'The sweep state machine (FLYWHEEL_STATE_MACHINE_SWEEP for `flywheel sweep start --target aws`)',
    });
  }
}
