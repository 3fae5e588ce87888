/**
 * Training runs on AWS, from the synthesized app: the `train-policy` state machine (its definition is
 * `trainDefinition` with the construct's ARNs), the policy trainer's job definitions on the GPU pool (a container one and
 * a multi-node parallel one, not privileged, the trainer image), the stall check on a schedule, alarms on failed and
 * timed-out executions, the training API function's access (its executions only), the binary PNG answer, and cdk-nag
 * with nothing unacknowledged.
 */
import { rmSync } from 'node:fs';
import { Stack } from 'aws-cdk-lib';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../lib/api/routes.ts';
import { trainStateMachineName } from '../../lib/training/infra/grant-training-executions.ts';
import { STALL_CHECK_RATE_MINUTES } from '../../lib/training/infra/train-state-machine.ts';
import { STALL_CHECK_JOB_QUEUE_ENV } from '../../lib/training/runs/check-stalled-runs.ts';
import { TRAIN_STATES, TRAIN_WORKFLOW } from '../../lib/training/workflow/train.asl.ts';
import { nagViolations, synthFlywheel, type SynthesizedStage } from '../infra/synth-flywheel.ts';

let synth: SynthesizedStage;
let workflows: Template;

beforeAll(() => {
  synth = synthFlywheel('dev');
  workflows = Template.fromStack(synth.stage.workflows);
}, 180_000);
afterAll(() => rmSync(synth.outdir, { recursive: true, force: true }));

/** The definition string of the training state machine, its tokens left as CloudFormation wrote them. */
function trainDefinitionJson(): string {
  const machines = workflows.findResources('AWS::StepFunctions::StateMachine', { Properties: { StateMachineName: trainStateMachineName({ stage: 'dev' }) } });
  const [machine] = Object.values(machines) as Array<{ Properties: { DefinitionString: unknown } }>;
  expect(machine).toBeDefined();
  return JSON.stringify(machine!.Properties.DefinitionString);
}

describe('training infrastructure', () => {
  it('builds the train-policy state machine from trainDefinition, with the step function, GPU queue and both trainer definitions', () => {
    expect(trainStateMachineName({ stage: 'dev' })).toBe(`flywheel-dev-${TRAIN_WORKFLOW}`);
    const definition = trainDefinitionJson();
    for (const state of [TRAIN_STATES.buildDataset, TRAIN_STATES.train, TRAIN_STATES.trainMultiNode, TRAIN_STATES.register, TRAIN_STATES.failure]) expect(definition).toContain(state);
    const t = synth.stage.workflows.training;
    const resolved = (v: string) => JSON.stringify(Stack.of(t).resolve(v));
    // The multi-node state names its own definition; the single one the container definition.
    expect(definition).toContain(resolved(t.trainer.single.jobDefinitionArn).slice(1, -1));
    expect(definition).toContain(resolved(t.trainer.multiNode.jobDefinitionArn).slice(1, -1));
    expect(definition).toContain(resolved(t.step.fn.functionArn).slice(1, -1));
    // The run's GPUs, vCPUs and memory from prepare-train, for both job shapes.
    expect(definition.split('ResourceRequirements.$').length - 1).toBe(2);
    // The lineage's code version (the synthesizing checkout's) and trainer image reach the step function.
    const stepEnv = JSON.stringify(Stack.of(t).resolve((t.step.fn.node.defaultChild as CfnFunction).environment));
    expect(stepEnv).toMatch(/"FLYWHEEL_CODE_VERSION":"[^"]+"/);
    expect(stepEnv).toContain('FLYWHEEL_TRAINER_IMAGE');
    workflows.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      StateMachineName: trainStateMachineName({ stage: 'dev' }),
      StateMachineType: 'STANDARD',
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: Match.objectLike({ Level: 'ALL' }),
    });
  });

  it('runs the policy trainer on the GPU pool: a container definition and a multi-node parallel one, not privileged, bad input not retried', () => {
    workflows.hasResourceProperties('AWS::Batch::JobDefinition', {
      JobDefinitionName: 'flywheel-dev-policy-trainer',
      Type: 'container',
      ContainerProperties: Match.objectLike({
        Command: ['python', '-m', 'flywheel_trainer', 'policy-job'],
        Privileged: false,
        ResourceRequirements: Match.arrayWith([{ Type: 'GPU', Value: '1' }]),
      }),
      RetryStrategy: Match.objectLike({ Attempts: 3, EvaluateOnExit: Match.arrayWith([{ Action: 'EXIT', OnExitCode: '2' }]) }),
    });
    workflows.hasResourceProperties('AWS::Batch::JobDefinition', {
      JobDefinitionName: 'flywheel-dev-policy-trainer-multinode',
      Type: 'multinode',
      NodeProperties: Match.objectLike({
        MainNode: 0,
        NumNodes: 2,
        // Open-ended (`0:`): a run's `NumNodes` override of any size fits the one node range.
        NodeRangeProperties: [Match.objectLike({ TargetNodes: '0:', Container: Match.objectLike({ Privileged: false }) })],
      }),
    });
    // The trainer image is the one repository the judge derivation's trainer pushes to: no new repository.
    const repositories = Object.keys(workflows.findResources('AWS::ECR::Repository'));
    expect(repositories).toHaveLength(1);
    expect(repositories[0]).toMatch(/^DeriveJudgesTrainerRepository/);
    // The job role may write the runs' blobs only.
    const policies = JSON.stringify(workflows.findResources('AWS::IAM::Policy'));
    expect(policies).toContain('/training/runs/*');
  });

  it('checks for stalled runs on a schedule and alarms on failed and timed-out executions', () => {
    workflows.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: `rate(${STALL_CHECK_RATE_MINUTES} minutes)`,
      Target: Match.objectLike({ Arn: Match.anyValue() }),
    });
    const stallFunctions = workflows.findResources('AWS::Lambda::Function', { Properties: { Description: Match.stringLikeRegexp('training runs whose heartbeat stopped') } });
    expect(Object.keys(stallFunctions)).toHaveLength(1);
    // Its jobs port (the GPU queue: waiting jobs are not stalls) and the training executions it describes.
    const stallEnv = JSON.stringify((Object.values(stallFunctions)[0] as { Properties: { Environment: unknown } }).Properties.Environment);
    expect(stallEnv).toContain(STALL_CHECK_JOB_QUEUE_ENV);
    expect(stallEnv).toContain('FLYWHEEL_STATE_MACHINE_TRAIN_POLICY');
    const stallPolicy = JSON.stringify(Object.entries(workflows.findResources('AWS::IAM::Policy')).filter(([id]) => id.startsWith('TrainingStallCheck')));
    for (const action of ['batch:ListJobs', 'batch:DescribeJobs', 'states:DescribeExecution']) expect(stallPolicy).toContain(action);
    const alarms = Object.values(workflows.findResources('AWS::CloudWatch::Alarm')).map((a) => JSON.stringify(a));
    const training = alarms.filter((a) => a.includes("training run's execution"));
    expect(training.filter((a) => a.includes('ExecutionsFailed'))).toHaveLength(1);
    expect(training.filter((a) => a.includes('ExecutionsTimedOut'))).toHaveLength(1);
  });

  it('serves the training routes from training/api, which reaches only the training executions, and answers PNG as bytes', () => {
    const runRoutes = ['getTrainingCurves', 'getTrainingRun', 'listTrainingRuns', 'postTrainingRun', 'resumeTrainingRun', 'stopTrainingRun'];
    const mine = routes.filter((r) => runRoutes.includes(r.operationId));
    expect(mine).toHaveLength(runRoutes.length);
    for (const r of mine) {
      expect(r.lambda).toBe('training/api');
      expect(r.scope).toBe(r.method === 'GET' ? 'read' : 'admin');
    }
    const fn = Object.entries(synth.api.findResources('AWS::Lambda::Function')).find(([id]) => id.startsWith('TrainingApi'));
    expect(fn).toBeDefined();
    const env = (fn![1] as { Properties: { Environment: { Variables: Record<string, unknown> } } }).Properties.Environment.Variables;
    expect(JSON.stringify(env.FLYWHEEL_STATE_MACHINE_TRAIN_POLICY)).toContain(`stateMachine:flywheel-dev-${TRAIN_WORKFLOW}`);
    const policy = JSON.stringify(Object.entries(synth.api.findResources('AWS::IAM::Policy')).filter(([id]) => id.startsWith('TrainingApi')));
    for (const action of ['states:StartExecution', 'states:StopExecution', 'states:RedriveExecution', 'states:DescribeExecution']) expect(policy).toContain(action);
    expect(policy).toContain(`execution:flywheel-dev-${TRAIN_WORKFLOW}:*`);
    synth.api.hasResourceProperties('AWS::ApiGateway::RestApi', { BinaryMediaTypes: ['image/png'] });
  });

  it('leaves no cdk-nag finding unacknowledged', () => {
    expect(nagViolations(synth.stage.workflows)).toEqual([]);
    expect(nagViolations(synth.stage.api)).toEqual([]);
  });
});
