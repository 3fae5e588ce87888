/**
 * The Compute stack (AWS Batch): the jobs' network with one controlled way out, one fair-share queue per pool whose
 * share identifiers are the five compute categories weighted from the stage settings, RUNNABLE time limits and their
 * report, the rollout and forge job definitions (privileged, logs to CloudWatch, images from the stack's ECR
 * repositories). cdk-nag and cfn-lint over the synthesized templates.
 */
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchWeightFactors } from '../../lib/compute/batch-weight-factors.ts';
import { BatchNetwork, checkModelEndpointEgress } from '../../lib/compute/infra/batch-network.ts';
import { ROLLOUT_EXIT_CODES } from '../../lib/rollout/rollout-exit-codes.ts';
import { STAGES } from '../../lib/config/stages.ts';
import { COMPUTE_CATEGORIES } from '../../lib/ports/jobs.ts';
import { ROLLOUT_ATTEMPT_TIMEOUT_SECONDS, ROLLOUT_JOB_ATTEMPTS, SHARD_JOB_TIMEOUT_SECONDS } from '../../lib/sweeps/workflow/sweep.asl.ts';
import { nagViolations, resourcesOfType, synthFlywheel, type SynthesizedStage } from './synth-flywheel.ts';

const run = promisify(execFile);
const stageNames = ['dev', 'prod'] as const;
const synthesized: Partial<Record<(typeof stageNames)[number], { s: SynthesizedStage; compute: Template; workflows: Template; paths: string[] }>> = {};

beforeAll(() => {
  for (const name of stageNames) {
    const s = synthFlywheel(name);
    const assembly = s.stage.synth();
    const template = (id: string) => assembly.getStackArtifact(id).template as Record<string, unknown>;
    const compute = template(s.stage.compute.artifactId);
    const workflows = template(s.stage.workflows.artifactId);
    const paths = [join(s.outdir, `${name}-compute.template.json`), join(s.outdir, `${name}-workflows.template.json`)];
    writeFileSync(paths[0]!, JSON.stringify(compute));
    writeFileSync(paths[1]!, JSON.stringify(workflows));
    synthesized[name] = { s, compute: Template.fromJSON(compute), workflows: Template.fromJSON(workflows), paths };
  }
}, 120_000);
afterAll(() => {
  for (const v of Object.values(synthesized)) rmSync(v.s.outdir, { recursive: true, force: true });
});
const get = (name: (typeof stageNames)[number]) => synthesized[name]!;

describe.each(stageNames)('compute stack (%s)', (name) => {
  const settings = STAGES[name];
  const compute = () => get(name).compute;

  it('one managed EC2 compute environment per pool, scaling from zero, in private subnets, with the stage instance families', () => {
    const environments = Object.values(resourcesOfType(compute(), 'AWS::Batch::ComputeEnvironment'));
    expect(environments).toHaveLength(2);
    const byTypes = (types: string[]) => environments.find((e) => JSON.stringify(e.Properties.ComputeResources.InstanceTypes) === JSON.stringify(types));
    for (const pool of ['gpu', 'cpu'] as const) {
      const env = byTypes(settings.computePools[pool].instanceTypes);
      expect(env, pool).toBeDefined();
      expect(env!.Properties).toMatchObject({
        Type: 'managed',
        ComputeResources: {
          Type: 'EC2',
          MinvCpus: 0,
          MaxvCpus: settings.computePools[pool].maxvCpus,
          Ec2Configuration: [{ ImageType: pool === 'gpu' ? 'ECS_AL2023_NVIDIA' : 'ECS_AL2023' }],
        },
      });
      expect(env!.Properties.ComputeResources.Subnets).toHaveLength(2);
    }
  });

  it('one fair-share queue per pool; its shares are the five categories with the stage weights as Batch factors', () => {
    const queues = Object.values(resourcesOfType(compute(), 'AWS::Batch::JobQueue'));
    expect(queues).toHaveLength(2);
    const policies = Object.entries(resourcesOfType(compute(), 'AWS::Batch::SchedulingPolicy'));
    expect(policies).toHaveLength(2);
    const factors = batchWeightFactors(settings.computeShares);
    for (const [, policy] of policies) {
      expect(policy.Properties.FairsharePolicy.ShareDecaySeconds).toBe(settings.computeShareDecaySeconds);
      expect(policy.Properties.FairsharePolicy.ShareDistribution).toEqual(COMPUTE_CATEGORIES.map((c) => ({ ShareIdentifier: c, WeightFactor: factors[c] })));
    }
    for (const queue of queues) {
      expect(queue.Properties.ComputeEnvironmentOrder).toHaveLength(1);
      expect(policies.filter(([id]) => JSON.stringify(queue.Properties.SchedulingPolicyArn).includes(id))).toHaveLength(1);
      expect(queue.Properties.JobStateTimeLimitActions).toEqual(
        ['CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY', 'MISCONFIGURATION:COMPUTE_ENVIRONMENT_MAX_RESOURCE', 'MISCONFIGURATION:JOB_RESOURCE_REQUIREMENT'].map((reason) => ({
          Action: 'CANCEL',
          MaxTimeSeconds: settings.runnableTimeLimitSeconds,
          Reason: reason,
          State: 'RUNNABLE',
        })),
      );
    }
  });

  it('jobs cancelled for waiting RUNNABLE are reported to the alarm topic', () => {
    const [rule] = Object.values(resourcesOfType(compute(), 'AWS::Events::Rule'));
    expect(rule!.Properties.EventPattern).toMatchObject({
      source: ['aws.batch'],
      'detail-type': ['Batch Job State Change'],
      // What Batch writes once the time-limit action cancelled the job (AWS Batch user guide), one prefix per reason
      // the queues cancel for; not the `CAPACITY:… - <detail>` a job still waiting shows.
      detail: {
        status: ['FAILED'],
        statusReason: [
          { prefix: 'Canceled by JobStateTimeLimit action due to reason: CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY' },
          { prefix: 'Canceled by JobStateTimeLimit action due to reason: MISCONFIGURATION:COMPUTE_ENVIRONMENT_MAX_RESOURCE' },
          { prefix: 'Canceled by JobStateTimeLimit action due to reason: MISCONFIGURATION:JOB_RESOURCE_REQUIREMENT' },
        ],
      },
    });
    const queueReasons = Object.values(resourcesOfType(compute(), 'AWS::Batch::JobQueue')).flatMap((q) => q.Properties.JobStateTimeLimitActions.map((a: { Reason: string }) => a.Reason));
    expect(rule!.Properties.EventPattern.detail.statusReason.map((r: { prefix: string }) => r.prefix.split(': ')[1]).sort()).toEqual([...new Set(queueReasons)].sort());
    expect(rule!.Properties.EventPattern.detail.jobQueue).toHaveLength(2);
    expect(rule!.Properties.Targets).toHaveLength(1);
    expect(JSON.stringify(rule!.Properties.Targets[0].Arn)).toContain('AlarmTopic');
    // A custom notification of AWS Chatbot (so it reaches Slack too), keeping Batch's reason text.
    const template = rule!.Properties.Targets[0].InputTransformer;
    expect(template.InputPathsMap).toMatchObject({ 'detail-statusReason': '$.detail.statusReason', 'detail-jobName': '$.detail.jobName' });
    expect(JSON.parse(template.InputTemplate)).toMatchObject({
      version: '1.0',
      source: 'custom',
      content: { title: expect.stringContaining('cancelled after too long RUNNABLE'), description: expect.stringContaining('<detail-statusReason>') },
    });
    // EventBridge may publish to the encrypted alarm topic: the topic policy and its key let events.amazonaws.com.
    const keyPolicy = Object.values(resourcesOfType(get(name).s.pipeline, 'AWS::KMS::Key'))[0]!.Properties.KeyPolicy.Statement as Array<{ Principal?: { Service?: string } }>;
    expect(keyPolicy.some((st) => st.Principal?.Service === 'events.amazonaws.com')).toBe(true);
    const topicPolicy = Object.values(resourcesOfType(get(name).s.pipeline, 'AWS::SNS::TopicPolicy'))[0]!.Properties.PolicyDocument.Statement as Array<{ Action: string; Principal?: { Service?: string } }>;
    expect(topicPolicy.some((st) => st.Principal?.Service === 'events.amazonaws.com' && st.Action === 'sns:Publish')).toBe(true);
  });

  it('rollout and forge job definitions: privileged, logs to CloudWatch, images from the stack ECR repositories, exit-code retries', () => {
    const definitions = Object.values(resourcesOfType(compute(), 'AWS::Batch::JobDefinition'));
    expect(definitions.map((d) => d.Properties.JobDefinitionName).sort()).toEqual([`flywheel-${name}-forge`, `flywheel-${name}-rollout`]);
    const repositories = Object.keys(resourcesOfType(compute(), 'AWS::ECR::Repository'));
    expect(repositories).toHaveLength(2);
    for (const d of definitions) {
      const container = d.Properties.ContainerProperties;
      expect(container.Privileged).toBe(true);
      expect(container.LogConfiguration.LogDriver).toBe('awslogs');
      expect(JSON.stringify(container.LogConfiguration.Options['awslogs-group'])).toMatch(/JobLogs/);
      expect(repositories.some((id) => JSON.stringify(container.Image).includes(id))).toBe(true);
      expect(container.Environment).toEqual(expect.arrayContaining([expect.objectContaining({ Name: 'FLYWHEEL_TABLE' }), expect.objectContaining({ Name: 'FLYWHEEL_BUCKET' })]));
      expect(d.Properties.RetryStrategy).toEqual({
        Attempts: ROLLOUT_JOB_ATTEMPTS,
        EvaluateOnExit: [
          { Action: 'EXIT', OnExitCode: String(ROLLOUT_EXIT_CODES.badInput) },
          expect.objectContaining({ Action: 'RETRY', OnStatusReason: expect.stringContaining('Host EC2') }),
          { Action: 'RETRY', OnReason: '*' },
        ],
      });
    }
    const rollout = definitions.find((d) => d.Properties.JobDefinitionName.endsWith('rollout'))!;
    expect(rollout.Properties.ContainerProperties.ResourceRequirements).toEqual(expect.arrayContaining([{ Type: 'GPU', Value: '1' }]));
    // The state machine waits for every attempt at its longest: the two timeouts agree.
    expect(rollout.Properties.Timeout).toEqual({ AttemptDurationSeconds: ROLLOUT_ATTEMPT_TIMEOUT_SECONDS });
    expect(SHARD_JOB_TIMEOUT_SECONDS).toBeGreaterThan(ROLLOUT_JOB_ATTEMPTS * ROLLOUT_ATTEMPT_TIMEOUT_SECONDS);
  });

  it('network: private subnets, NAT egress, S3 and DynamoDB gateway endpoints, flow logs; jobs may only send HTTPS, and to the listed model endpoints', () => {
    compute().resourceCountIs('AWS::EC2::NatGateway', settings.retainData ? 2 : 1);
    compute().resourceCountIs('AWS::EC2::VPCEndpoint', 2);
    compute().hasResourceProperties('AWS::EC2::FlowLog', { TrafficType: 'ALL', LogDestinationType: 'cloud-watch-logs' });
    const groups = Object.values(resourcesOfType(compute(), 'AWS::EC2::SecurityGroup')).filter((g) => String(g.Properties.GroupDescription).includes('Batch jobs'));
    expect(groups).toHaveLength(1);
    expect(groups[0]!.Properties.SecurityGroupIngress).toBeUndefined();
    // HTTPS anywhere, then one rule per modelEndpointEgress entry (dev lists the VPC's own range on 8000, prod none).
    expect(settings.modelEndpointEgress).toHaveLength(name === 'dev' ? 1 : 0);
    expect(groups[0]!.Properties.SecurityGroupEgress).toEqual([
      expect.objectContaining({ IpProtocol: 'tcp', FromPort: 443, ToPort: 443, CidrIp: '0.0.0.0/0' }),
      ...settings.modelEndpointEgress.map((e) => ({ IpProtocol: 'tcp', FromPort: e.port, ToPort: e.port, CidrIp: e.cidr, Description: `Model endpoint: ${e.description}` })),
    ]);
    if (name === 'dev') {
      // The dev entry is the VPC's own range: an endpoint beside the jobs, not the internet.
      const [vpc] = Object.values(resourcesOfType(compute(), 'AWS::EC2::VPC'));
      expect(vpc!.Properties.CidrBlock).toBe(settings.modelEndpointEgress[0]!.cidr);
    }
    for (const env of Object.values(resourcesOfType(compute(), 'AWS::Batch::ComputeEnvironment'))) {
      expect(env.Properties.ComputeResources.SecurityGroupIds).toHaveLength(1);
    }
  });
});

describe('modelEndpointEgress entries the network refuses', () => {
  const ok = { cidr: '10.20.0.0/16', port: 8000, description: 'vLLM in the models VPC' };
  it('accepts a private range on a port other than 443', () => {
    expect(() => checkModelEndpointEgress(ok, 'modelEndpointEgress[0]')).not.toThrow();
  });
  it.each([
    ['a range that is not a CIDR', { cidr: '10.20.0.0', port: 8000 }, /modelEndpointEgress\[0\]: cidr "10.20.0.0" is not an IPv4 CIDR/],
    ['the whole internet', { cidr: '0.0.0.0/0', port: 8000 }, /to the whole internet/],
    ['port 443 (always open)', { port: 443 }, /port 443 is always open/],
    ['a port out of range', { port: 70_000 }, /port 70000 is not a TCP port/],
    ['a description EC2 refuses', { description: 'Bob’s vLLM' }, /characters a security group rule refuses/],
  ] as const)('refuses %s, naming the entry', (_what, change, message) => {
    expect(() => checkModelEndpointEgress({ ...ok, ...change }, 'modelEndpointEgress[0]')).toThrow(expect.objectContaining({ name: 'Flywheel.ConfigurationError', message: expect.stringMatching(message) }));
  });
  it('stops the synth of a stage that lists a bad one', () => {
    const settings = { ...STAGES.dev, modelEndpointEgress: [ok, { ...ok, port: 443 }] };
    expect(() => new BatchNetwork(new Stack(new App(), 'Probe'), 'Network', { settings })).toThrow(/modelEndpointEgress\[1\]: port 443/);
  });
});

describe('cdk-nag and cfn-lint over the Compute and Workflows stacks', () => {
  it.each(stageNames)('%s: no CDK warnings or errors on the Compute and Workflows stacks', (name) => {
    const { stage } = get(name).s;
    for (const stack of [stage.compute, stage.workflows]) {
      const annotations = Annotations.fromStack(stack);
      expect(annotations.findError('*', Match.anyValue()), stack.stackName).toEqual([]);
      expect(annotations.findWarning('*', Match.anyValue()), stack.stackName).toEqual([]);
    }
  });

  it.each(stageNames)('%s: no unacknowledged AwsSolutions finding in the app', (name) => {
    expect(nagViolations(get(name).s.app)).toEqual([]);
  });

  it.each(stageNames)('%s: cfn-lint passes', async (name) => {
    const result = await run('cfn-lint', ['--format', 'parseable', ...get(name).paths]).then(
      (r) => ({ code: 0, out: r.stdout + r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
    );
    expect(result).toEqual({ code: 0, out: '' });
  }, 90_000);
});
