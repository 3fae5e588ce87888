/**
 * The Workflows stack: the sweep state machine rendered by the definition factory (CustomState JSON for Batch with the
 * evaluation share), one house function per step, the role's grants (.sync on Batch, Distributed Map children), the
 * per-stage schedule and the `checkpoint.registered` rule, both starting sweeps through one function; the alarms on
 * executions that end badly and the rule that routes `sweep.refused` to people (a saturated suite and an unsuccessful
 * sweep raise notices, which reach the alarm topic through `notice.raised`).
 */
import { rmSync } from 'node:fs';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STAGES } from '../../lib/config/stages.ts';
import { SHARD_JOB_TIMEOUT_SECONDS, SWEEP_SHARE_IDENTIFIER, SWEEP_TIMEOUT_SECONDS } from '../../lib/sweeps/workflow/sweep.asl.ts';
import { SWEEP_STEP_NAMES } from '../../lib/sweeps/workflow/sweep-steps.ts';
import { resourcesOfType, synthFlywheel, type SynthesizedStage } from './synth-flywheel.ts';

const stageNames = ['dev', 'prod'] as const;
const synthesized: Partial<Record<(typeof stageNames)[number], { s: SynthesizedStage; workflows: Template; compute: Template }>> = {};

beforeAll(() => {
  for (const name of stageNames) {
    const s = synthFlywheel(name);
    const assembly = s.stage.synth();
    synthesized[name] = {
      s,
      workflows: Template.fromJSON(assembly.getStackArtifact(s.stage.workflows.artifactId).template as Record<string, unknown>),
      compute: Template.fromJSON(assembly.getStackArtifact(s.stage.compute.artifactId).template as Record<string, unknown>),
    };
  }
}, 120_000);
afterAll(() => {
  for (const v of Object.values(synthesized)) rmSync(v.s.outdir, { recursive: true, force: true });
});

type Statement = { Action: string | string[]; Resource: unknown; Effect: string };

describe.each(stageNames)('workflows stack (%s)', (name) => {
  const settings = STAGES[name];
  const workflows = () => synthesized[name]!.workflows;
  const stateMachine = () => Object.values(resourcesOfType(workflows(), 'AWS::StepFunctions::StateMachine'))[0]!;
  const definitionText = () => JSON.stringify(stateMachine().Properties.DefinitionString);
  const roleStatements = (): Statement[] => {
    const roleId = stateMachine().Properties.RoleArn['Fn::GetAtt'][0] as string;
    return Object.values(resourcesOfType(workflows(), 'AWS::IAM::Policy'))
      .filter((p) => (p.Properties.Roles as Array<{ Ref: string }>).some((r) => r.Ref === roleId))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
  };
  const actions = (statements: Statement[]) => statements.flatMap((s) => [s.Action].flat());

  it('a Standard state machine named per stage, traced, logging every event, with the sweep timeout', () => {
    expect(stateMachine().Properties).toMatchObject({
      StateMachineName: `flywheel-${name}-sweep`,
      StateMachineType: 'STANDARD',
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: { Level: 'ALL', IncludeExecutionData: true },
    });
    expect(definitionText()).toContain(`\\"TimeoutSeconds\\":${SWEEP_TIMEOUT_SECONDS}`);
  });

  it('the definition submits Batch array jobs (.sync) to the GPU queue and rollout definition of the compute stack, under the evaluation share', () => {
    const text = definitionText();
    expect(text).toContain('arn:aws:states:::batch:submitJob.sync');
    expect(text).toContain(`\\"ShareIdentifier\\":\\"${SWEEP_SHARE_IDENTIFIER}\\"`);
    expect(text).toContain(`\\"TimeoutSeconds\\":${SHARD_JOB_TIMEOUT_SECONDS}`);
    // The queue and the job definition come from the Compute stack's outputs, the functions from this stack.
    expect(text).toMatch(new RegExp(`Fn::GetStackOutput.{0,80}Flywheel-${name}-Compute.{0,120}GpuPoolQueue`));
    expect(text).toMatch(new RegExp(`Fn::GetStackOutput.{0,80}Flywheel-${name}-Compute.{0,120}RolloutJobDefinition`));
  });

  it('one house function per step, each invoked by the state machine, with its error alarm', () => {
    const functions = resourcesOfType(workflows(), 'AWS::Lambda::Function');
    const stepFunctions = Object.entries(functions).filter(([, f]) => String(f.Properties.Description).startsWith('Flywheel sweep step'));
    expect(stepFunctions.map(([, f]) => f.Properties.Description.split(' ')[3]).sort()).toEqual([...SWEEP_STEP_NAMES].sort());
    for (const [id, f] of stepFunctions) {
      expect(f.Properties).toMatchObject({ Runtime: 'nodejs24.x', Architectures: ['arm64'], TracingConfig: { Mode: 'Active' } });
      expect(definitionText()).toContain(id);
    }
    const invoke = roleStatements().find((s) => [s.Action].flat().includes('lambda:InvokeFunction'))!;
    expect((invoke.Resource as unknown[]).map((r) => JSON.stringify(r)).sort()).toEqual(stepFunctions.map(([id]) => JSON.stringify({ 'Fn::GetAtt': [id, 'Arn'] })).sort());
    const alarms = Object.values(resourcesOfType(workflows(), 'AWS::CloudWatch::Alarm'))
      .filter((a) => a.Properties.Namespace === 'AWS/Lambda')
      .map((a) => a.Properties.Dimensions[0].Value.Ref);
    expect(alarms.sort()).toEqual(Object.keys(functions).sort());
  });

  it('executions that fail, time out or are stopped (and so never reach notify) raise alarms to the alarm topic', () => {
    const stateMachineId = Object.keys(resourcesOfType(workflows(), 'AWS::StepFunctions::StateMachine')).find((id) => id.startsWith('SweepStateMachine'))!;
    // The sweep's own alarms (the training state machine has its own, test/training/training-infra.test.ts).
    const alarms = Object.values(resourcesOfType(workflows(), 'AWS::CloudWatch::Alarm')).filter(
      (a) => a.Properties.Namespace === 'AWS/States' && JSON.stringify(a.Properties.Dimensions) === JSON.stringify([{ Name: 'StateMachineArn', Value: { Ref: stateMachineId } }]),
    );
    expect(alarms.map((a) => a.Properties.MetricName).sort()).toEqual(['ExecutionsAborted', 'ExecutionsFailed', 'ExecutionsTimedOut']);
    for (const alarm of alarms) {
      expect(alarm.Properties).toMatchObject({
        Dimensions: [{ Name: 'StateMachineArn', Value: { Ref: stateMachineId } }],
        Statistic: 'Sum',
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
      });
      expect(alarm.Properties.AlarmActions).toHaveLength(1);
      expect(JSON.stringify(alarm.Properties.AlarmActions)).toContain('AlarmTopic');
      expect(alarm.Properties.OKActions).toEqual(alarm.Properties.AlarmActions);
      expect(alarm.Properties.AlarmDescription).toContain(`flywheel-${name}-sweep`);
    }
  });

  it('sweep.refused alone has a rule of its own to the alarm topic; a saturated suite and an unsuccessful sweep are told by their notices', () => {
    const rules = Object.values(resourcesOfType(workflows(), 'AWS::Events::Rule'));
    const toTopic = rules.filter((r) => JSON.stringify(r.Properties.Targets).includes('AlarmTopic'));
    expect(toTopic.map((r) => r.Properties.EventPattern)).toEqual([{ source: ['flywheel'], 'detail-type': ['sweep.refused'] }]);
    const [refused] = toTopic;
    expect(JSON.stringify(refused!.Properties.EventBusName)).toContain('Bus');
    expect(refused!.Properties.Targets).toHaveLength(1);
    const notice = JSON.parse(refused!.Properties.Targets[0].InputTransformer.InputTemplate) as { version: string; source: string; content: { title: string; nextSteps: string[] } };
    expect(notice).toMatchObject({ version: '1.0', source: 'custom' });
    expect(notice.content.title).toBe('Sweep <detail-sweepId> did not start');
    // checkSaturation and notifySweep raise notices (notice.raised → OnNoticeRaised → the topic): no second rule.
    for (const type of ['suite.saturated', 'sweep.finished']) expect(rules.filter((r) => JSON.stringify(r.Properties.EventPattern).includes(type)), type).toEqual([]);
  });

  it('the role: SubmitJob on the one queue, the rollout definition and its clones per image, what .sync needs, its own Distributed Map children', () => {
    const statements = roleStatements();
    const submit = statements.find((s) => [s.Action].flat().includes('batch:SubmitJob'))!;
    expect(submit.Resource).toHaveLength(3);
    expect(JSON.stringify(submit.Resource)).not.toContain('"*"');
    expect(JSON.stringify((submit.Resource as unknown[])[2])).toContain(`:job-definition/flywheel-${name}-rollout-env-*`);
    // Registering, tagging and passing roles are plan-shards' alone.
    expect(actions(statements).filter((a) => /^batch:(Register|Tag|DescribeJobDefinitions)|^iam:/.test(a))).toEqual([]);
    expect(actions(statements)).toEqual(expect.arrayContaining(['batch:DescribeJobs', 'batch:TerminateJob', 'events:PutTargets', 'events:PutRule', 'events:DescribeRule', 'states:StartExecution', 'states:DescribeExecution', 'states:StopExecution']));
    const rule = statements.find((s) => [s.Action].flat().includes('events:PutRule'))!;
    expect(JSON.stringify(rule.Resource)).toContain('rule/StepFunctionsGetEventsForBatchJobsRule');
    const start = statements.find((s) => [s.Action].flat().includes('states:StartExecution'))!;
    expect(JSON.stringify(start.Resource)).toContain(`stateMachine:flywheel-${name}-sweep`);
    for (const action of actions(statements)) expect(action).not.toContain('*');
  });

  it('plan-shards alone registers the rollout definition\'s clones per environment image: register and tag <rollout>-env-* only, pass exactly the rollout roles to Batch', () => {
    const functions = resourcesOfType(workflows(), 'AWS::Lambda::Function');
    const statementsOf = (roleId: string) =>
      Object.values(resourcesOfType(workflows(), 'AWS::IAM::Policy'))
        .filter((p) => (p.Properties.Roles as Array<{ Ref: string }>).some((r) => r.Ref === roleId))
        .flatMap((p) => p.Properties.PolicyDocument.Statement as Array<Statement & { Condition?: Record<string, Record<string, string>> }>);
    const [planId, plan] = Object.entries(functions).find(([, f]) => String(f.Properties.Description).startsWith('Flywheel sweep step plan-shards'))!;
    // The rollout definition it clones (the Compute stack's, by its output).
    expect(JSON.stringify(plan.Properties.Environment.Variables.FLYWHEEL_ROLLOUT_JOB_DEFINITION)).toMatch(new RegExp(`Flywheel-${name}-Compute.{0,120}RolloutJobDefinition`));
    const statements = statementsOf(plan.Properties.Role['Fn::GetAtt'][0] as string);
    const withAction = (action: string) => statements.filter((st) => [st.Action].flat().includes(action));
    const clones = `:job-definition/flywheel-${name}-rollout-env-*`;
    const [register] = withAction('batch:RegisterJobDefinition');
    expect([register!.Action].flat()).toEqual(['batch:RegisterJobDefinition']);
    expect(JSON.stringify(register!.Resource)).toContain(clones);
    expect([register!.Resource].flat()).toHaveLength(1);
    const [tag] = withAction('batch:TagResource');
    expect(JSON.stringify(tag!.Resource)).toContain(clones);
    expect(tag!.Condition).toEqual({ StringEquals: { 'batch:CreateAction': 'RegisterJobDefinition' } });
    const [describeDefinitions] = withAction('batch:DescribeJobDefinitions');
    expect(describeDefinitions!.Resource).toBe('*'); // no resource-level permission exists for it
    // CDK merges it with X-Ray's (no resource either): nothing else is on "*".
    expect([describeDefinitions!.Action].flat().sort()).toEqual(['batch:DescribeJobDefinitions', 'xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
    const [pass] = withAction('iam:PassRole');
    expect(pass!.Condition).toEqual({ StringEquals: { 'iam:PassedToService': 'batch.amazonaws.com' } });
    const passed = JSON.stringify(pass!.Resource);
    expect([pass!.Resource].flat()).toHaveLength(2);
    expect(passed).toMatch(/RolloutJobRole/);
    expect(passed).toMatch(/RolloutContainerExecutionRole/);
    // No other sweep function registers, tags or passes roles.
    for (const [, f] of Object.entries(functions).filter(([id]) => id !== planId)) {
      const roleId = f.Properties.Role?.['Fn::GetAtt']?.[0] as string | undefined;
      if (!roleId) continue;
      expect(statementsOf(roleId).flatMap((st) => [st.Action].flat()).filter((a) => /^batch:(Register|TagResource)|^iam:PassRole/.test(a)), String(f.Properties.Description)).toEqual([]);
    }
  });

  it('a nightly schedule per stage invokes the start-sweep function with the scheduled time', () => {
    const [schedule] = Object.values(resourcesOfType(workflows(), 'AWS::Scheduler::Schedule'));
    expect(schedule!.Properties).toMatchObject({
      ScheduleExpression: settings.sweepSchedule.expression,
      ScheduleExpressionTimezone: settings.sweepSchedule.timezone,
      State: settings.sweepSchedule.enabled ? 'ENABLED' : 'DISABLED',
      FlexibleTimeWindow: { Mode: 'OFF' },
    });
    expect(JSON.parse(schedule!.Properties.Target.Input)).toEqual({ trigger: 'schedule', scheduledTime: '<aws.scheduler.scheduled-time>' });
    expect(schedule!.Properties.Target.RetryPolicy).toEqual({ MaximumEventAgeInSeconds: 7200, MaximumRetryAttempts: 5 });
    const starter = Object.entries(resourcesOfType(workflows(), 'AWS::Lambda::Function')).find(([, f]) => String(f.Properties.Description).includes('starts a sweep'))!;
    expect(schedule!.Properties.Target.Arn).toEqual({ 'Fn::GetAtt': [starter[0], 'Arn'] });
    expect(starter[1].Properties.Environment.Variables.FLYWHEEL_STATE_MACHINE_SWEEP).toEqual({ Ref: Object.keys(resourcesOfType(workflows(), 'AWS::StepFunctions::StateMachine'))[0] });
  });

  it('a rule on the Flywheel bus starts a sweep for each registered checkpoint', () => {
    const rule = Object.values(resourcesOfType(workflows(), 'AWS::Events::Rule')).find((r) => JSON.stringify(r.Properties.EventPattern).includes('checkpoint.registered'))!;
    expect(rule.Properties.EventPattern).toEqual({ source: ['flywheel'], 'detail-type': ['checkpoint.registered'] });
    expect(JSON.stringify(rule.Properties.EventBusName)).toContain('Bus');
    expect(rule.Properties.Targets).toEqual([expect.objectContaining({ RetryPolicy: { MaximumEventAgeInSeconds: 7200, MaximumRetryAttempts: 5 } })]);
  });

  it('the start-sweep function may start, describe and redrive sweep executions, nothing else of Step Functions', () => {
    const starter = Object.entries(resourcesOfType(workflows(), 'AWS::Lambda::Function')).find(([, f]) => String(f.Properties.Description).includes('starts a sweep'))!;
    const roleId = starter[1].Properties.Role['Fn::GetAtt'][0] as string;
    const statements = Object.values(resourcesOfType(workflows(), 'AWS::IAM::Policy'))
      .filter((p) => (p.Properties.Roles as Array<{ Ref: string }>).some((r) => r.Ref === roleId))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
    expect(actions(statements).filter((a) => a.startsWith('states:')).sort()).toEqual(['states:DescribeExecution', 'states:RedriveExecution', 'states:StartExecution']);
    const describe = statements.find((st) => [st.Action].flat().includes('states:DescribeExecution'))!;
    expect(JSON.stringify(describe.Resource)).toContain(':execution:');
    const redrive = statements.find((st) => [st.Action].flat().includes('states:RedriveExecution'))!;
    expect(JSON.stringify(redrive.Resource)).toContain(':execution:');
    expect(actions(statements)).not.toContain('states:StopExecution');
  });
});
