import { rmSync } from 'node:fs';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { sweepStateMachineName } from '../../lib/sweeps/infra/grant-sweep-executions.ts';
import { nagViolations, synthFlywheel, type SynthesizedStage } from '../infra/synth-flywheel.ts';

let synth: SynthesizedStage | undefined;
afterAll(() => {
  if (synth) rmSync(synth.outdir, { recursive: true, force: true });
});

describe('the registry and sweeps API functions in the synthesized app', () => {
  it('registry/api may write records and publish events; registry/sweeps-api may start and describe sweeps', () => {
    synth = synthFlywheel('dev');
    const functions = synth.api.findResources('AWS::Lambda::Function');
    const sweepsApi = Object.entries(functions).find(([, r]) => JSON.stringify(r).includes('registry-sweeps-api') || JSON.stringify(r.Properties?.Environment ?? {}).includes('FLYWHEEL_STATE_MACHINE_SWEEP'));
    expect(sweepsApi, 'a function with FLYWHEEL_STATE_MACHINE_SWEEP').toBeDefined();
    const env = JSON.stringify(sweepsApi![1].Properties.Environment.Variables.FLYWHEEL_STATE_MACHINE_SWEEP);
    expect(env).toContain(`stateMachine:${sweepStateMachineName({ stage: 'dev' })}`);
    // The name is the one the workflows stack gives its state machine.
    const machines = Template.fromStack(synth.stage.workflows).findResources('AWS::StepFunctions::StateMachine');
    expect(Object.values(machines).map((m) => m.Properties.StateMachineName)).toContain(sweepStateMachineName({ stage: 'dev' }));
    const policies = JSON.stringify(synth.api.findResources('AWS::IAM::Policy'));
    expect(policies).toContain('states:StartExecution');
    expect(policies).toContain('states:DescribeExecution');
    expect(policies).toContain('events:PutEvents');
    // No unacknowledged cdk-nag finding in the API stack.
    expect(nagViolations(synth.stage.api)).toEqual([]);
  });
});
