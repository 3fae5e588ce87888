/**
 * Compute accounting on AWS, from the synthesized app: an EventBridge rule on the default bus takes the Batch job
 * state changes of Flywheel's two job queues (and nothing else) to a queue with its dead-letter queue and alarms,
 * consumed by `compute/job-events` with partial batch failures; the consumer and the `compute/api` function touch
 * the records (and the bus, for notices) and nothing else (cdk-nag over the whole app: test/infra/stacks.test.ts).
 */
import { rmSync } from 'node:fs';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resourcesOfType, synthFlywheel, type SynthesizedStage } from '../infra/synth-flywheel.ts';

let synth: SynthesizedStage;
let compute: Template;

beforeAll(() => {
  synth = synthFlywheel('dev');
  const assembly = synth.stage.synth();
  compute = Template.fromJSON(assembly.getStackArtifact(synth.stage.compute.artifactId).template as Record<string, unknown>);
}, 180_000);
afterAll(() => rmSync(synth.outdir, { recursive: true, force: true }));

const idOf = (template: Template, type: string, prefix: string) => {
  const ids = Object.keys(template.findResources(type)).filter((id) => id.startsWith(prefix));
  expect(ids, `${type} ${prefix}`).toHaveLength(1);
  return ids[0]!;
};
const actionsOf = (template: Template, prefix: string) =>
  Object.entries(resourcesOfType(template, 'AWS::IAM::Policy'))
    .filter(([id]) => id.startsWith(prefix))
    .flatMap(([, p]) => (p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[] }>).flatMap((s) => [s.Action].flat()));

describe('compute accounting infrastructure', () => {
  it('takes the Batch job state changes of the two job queues from the default bus into a queue with a dead-letter queue', () => {
    const queue = idOf(compute, 'AWS::SQS::Queue', 'JobUsageQueue');
    const deadLetters = idOf(compute, 'AWS::SQS::Queue', 'JobUsageDeadLetterQueue');
    const rules = Object.values(resourcesOfType(compute, 'AWS::Events::Rule')).filter((r) => JSON.stringify(r.Properties.Targets).includes(queue));
    expect(rules).toHaveLength(1);
    const rule = rules[0]!.Properties;
    expect(rule.EventBusName).toBeUndefined(); // the default bus, where Batch sends its events
    expect(rule.EventPattern).toEqual({
      source: ['aws.batch'],
      'detail-type': ['Batch Job State Change'],
      detail: { jobQueue: [{ 'Fn::GetAtt': [idOf(compute, 'AWS::Batch::JobQueue', 'GpuPool'), 'JobQueueArn'] }, { 'Fn::GetAtt': [idOf(compute, 'AWS::Batch::JobQueue', 'CpuPool'), 'JobQueueArn'] }] },
    });
    expect(rule.Targets).toEqual([
      expect.objectContaining({ Arn: { 'Fn::GetAtt': [queue, 'Arn'] }, DeadLetterConfig: { Arn: { 'Fn::GetAtt': [deadLetters, 'Arn'] } }, RetryPolicy: { MaximumEventAgeInSeconds: 86_400, MaximumRetryAttempts: 10 } }),
    ]);
    compute.hasResourceProperties('AWS::SQS::Queue', { RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [deadLetters, 'Arn'] }, maxReceiveCount: Match.anyValue() }, SqsManagedSseEnabled: true });
    const alarmed = Object.values(resourcesOfType(compute, 'AWS::CloudWatch::Alarm')).map((a) => JSON.stringify(a.Properties.Dimensions));
    expect(alarmed.filter((d) => d.includes(queue))).toHaveLength(1);
    expect(alarmed.filter((d) => d.includes(deadLetters))).toHaveLength(2); // age and depth
  });

  it('consumes it with compute/job-events, reporting partial batch failures, granted the records and the bus only', () => {
    const queue = idOf(compute, 'AWS::SQS::Queue', 'JobUsageQueue');
    compute.hasResourceProperties('AWS::Lambda::EventSourceMapping', { EventSourceArn: { 'Fn::GetAtt': [queue, 'Arn'] }, BatchSize: 10, FunctionResponseTypes: ['ReportBatchItemFailures'] });
    const fn = resourcesOfType(compute, 'AWS::Lambda::Function')[idOf(compute, 'AWS::Lambda::Function', 'JobUsageConsumer')]!;
    expect(fn.Properties.Description).toBe('Flywheel compute/job-events (dev)');
    const actions = actionsOf(compute, 'JobUsageConsumer');
    for (const action of ['dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:GetItem', 'events:PutEvents', 'sqs:ReceiveMessage', 'sqs:DeleteMessage']) expect(actions).toContain(action);
    expect(actions.filter((a) => /^(s3|batch|states|bedrock):/.test(a))).toEqual([]);
  });

  it('serves the compute routes from compute/api, granted the records only', () => {
    const actions = actionsOf(synth.api, 'ComputeApi');
    expect(actions).toContain('dynamodb:Query');
    expect(actions.filter((a) => !/^(dynamodb|logs|xray):/.test(a))).toEqual([]);
  });
});
