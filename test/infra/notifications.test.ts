/**
 * What reaches people on AWS, end to end where it can be run here: the synthesized notice rules (their event patterns
 * and input transformers, as CloudFormation would create them) installed on an EventBridge bus in moto_server with an
 * SQS queue standing in for the alarm topic; the events are the ones the real sweep steps publish (a sweep driven
 * over the local drivers, republished through the AWS events driver: their `notice.raised` among them) and Batch job
 * state changes with the status reasons the AWS Batch user guide documents. Each happening is told once: what raises a
 * notice reaches the topic through `notice.raised` alone. Then the optional Slack channel (AWS Chatbot) of
 * `notifications.slack`.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CreateEventBusCommand, PutEventsCommand, PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge';
import { CreateQueueCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { App } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../lib/api/routes.ts';
import { STAGES, type StageSettings } from '../../lib/config/stages.ts';
import { EventBridgeEvents } from '../../lib/drivers/aws/eventbridge-events.ts';
import { FlywheelStage } from '../../lib/stacks/flywheel-stage.ts';
import { sweepStepHandlers } from '../../lib/sweeps/sweep-step-handlers.ts';
import { startSweepFromTrigger } from '../../lib/sweeps/workflow/start-sweep-from-trigger.ts';
import { motoClients, uniqueName, type MotoClients } from '../support/aws-test-resources.ts';
import { driveSweep } from '../sweeps/support/drive-sweep.ts';
import { rateScript } from '../sweeps/support/scripted-rollout.ts';
import { openSweepFixture, type SweepFixture } from '../sweeps/support/sweep-fixture.ts';
import { cdkJsonContext, nagViolations, resourcesOfType, synthFlywheel, type SynthesizedStage } from './synth-flywheel.ts';

const run = promisify(execFile);
type Resource = { Properties: Record<string, any> };
type Notification = { version: string; source: string; content: { title: string; description: string; nextSteps?: string[] }; metadata?: { threadId: string } };

let dev: SynthesizedStage;
let workflows: Template;
let compute: Template;
beforeAll(() => {
  dev = synthFlywheel('dev');
  const assembly = dev.stage.synth();
  workflows = Template.fromJSON(assembly.getStackArtifact(dev.stage.workflows.artifactId).template as Record<string, unknown>);
  compute = Template.fromJSON(assembly.getStackArtifact(dev.stage.compute.artifactId).template as Record<string, unknown>);
}, 120_000);
afterAll(() => rmSync(dev.outdir, { recursive: true, force: true }));

/** The synthesized rule whose event pattern mentions `text`. */
function ruleMatching(template: Template, text: string): Resource {
  const rule = Object.values(resourcesOfType(template, 'AWS::Events::Rule')).find((r) => JSON.stringify(r.Properties.EventPattern).includes(text));
  if (!rule) throw new Error(`no rule for ${text}`);
  return rule;
}

/** Replaces CloudFormation intrinsics in a pattern with what they resolve to (`values` by logical id). */
function resolveIntrinsics(node: unknown, values: Record<string, string>): unknown {
  if (Array.isArray(node)) return node.map((n) => resolveIntrinsics(n, values));
  if (node && typeof node === 'object') {
    const getAtt = (node as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
    if (getAtt) {
      const value = values[getAtt[0]];
      if (!value) throw new Error(`no value for ${getAtt[0]}`);
      return value;
    }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, resolveIntrinsics(v, values)]));
  }
  return node;
}

/** Installs a synthesized rule on a moto bus, its one target (the alarm topic) replaced by a fresh SQS queue. */
async function installRule(aws: MotoClients, busName: string, rule: Resource, values: Record<string, string> = {}): Promise<string> {
  const name = uniqueName('rule');
  const queueUrl = (await aws.sqs.send(new CreateQueueCommand({ QueueName: `${name}-alarm-topic` }))).QueueUrl!;
  const queueArn = `arn:aws:sqs:us-east-1:123456789012:${name}-alarm-topic`;
  await aws.eventbridge.send(new PutRuleCommand({ Name: name, EventBusName: busName, EventPattern: JSON.stringify(resolveIntrinsics(rule.Properties.EventPattern, values)) }));
  const [target] = rule.Properties.Targets as Array<{ InputTransformer: { InputPathsMap: Record<string, string>; InputTemplate: string } }>;
  await aws.eventbridge.send(new PutTargetsCommand({ Rule: name, EventBusName: busName, Targets: [{ Id: 'alarm-topic', Arn: queueArn, InputTransformer: target!.InputTransformer }] }));
  return queueUrl;
}

/** Every message the rule delivered (moto delivers while PutEvents runs). */
async function delivered(aws: MotoClients, queueUrl: string): Promise<Notification[]> {
  const out = await aws.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
  return (out.Messages ?? []).map((m) => JSON.parse(m.Body!) as Notification);
}

/**
 * Installs every rule of the stage on the Flywheel bus whose target is the alarm topic, each target replaced by one
 * fresh SQS queue that gets the matched event as it is: which events people would be told of, each once or more. (The
 * input transformers are left out: moto fills a whole-value placeholder such as OnNoticeRaised's `<detail-title>` in
 * without the quotes EventBridge gives a string; their rendering is checked on the template, test/people/.)
 */
async function installTopicRules(aws: MotoClients, busName: string): Promise<string> {
  const name = uniqueName('topic');
  const queueUrl = (await aws.sqs.send(new CreateQueueCommand({ QueueName: `${name}-alarm-topic` }))).QueueUrl!;
  const queueArn = `arn:aws:sqs:us-east-1:123456789012:${name}-alarm-topic`;
  const rules = [dev.pipeline, workflows, compute].flatMap((t) => Object.values(resourcesOfType(t, 'AWS::Events::Rule')));
  const toTopic = rules.filter((r) => r.Properties.EventBusName !== undefined && JSON.stringify(r.Properties.Targets).includes('AlarmTopic'));
  expect(toTopic.length).toBeGreaterThan(0);
  for (const [i, rule] of toTopic.entries()) {
    const ruleName = `${name}-${i}`;
    await aws.eventbridge.send(new PutRuleCommand({ Name: ruleName, EventBusName: busName, EventPattern: JSON.stringify(rule.Properties.EventPattern) }));
    await aws.eventbridge.send(new PutTargetsCommand({ Rule: ruleName, EventBusName: busName, Targets: [{ Id: 'alarm-topic', Arn: queueArn }] }));
  }
  return queueUrl;
}

interface ToldEvent {
  'detail-type': string;
  detail: { title: string; severity: string; dedupKey: string; text: string };
}

/** Every event delivered to the queue, however many. */
async function toldEvents(aws: MotoClients, queueUrl: string): Promise<ToldEvent[]> {
  const all: ToldEvent[] = [];
  for (;;) {
    const out = await aws.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
    if (!out.Messages?.length) return all;
    all.push(...out.Messages.map((m) => JSON.parse(m.Body!) as ToldEvent));
  }
}

async function newBus(aws: MotoClients): Promise<string> {
  const name = uniqueName('flywheel-bus');
  await aws.eventbridge.send(new CreateEventBusCommand({ Name: name }));
  return name;
}

describe('the notice rules on EventBridge (moto_server)', () => {
  const fixtures: SweepFixture[] = [];
  afterEach(() => {
    for (const fx of fixtures.splice(0)) fx.close();
  });

  /** Runs a whole sweep over the local drivers with the real step handlers; returns what the steps published. */
  /**
   * Runs a whole sweep (1 checkpoint × 1 suite of 10 tasks, strict: shards `…-0` with t000–t004 and `…-1` with
   * t005–t009) over the local drivers with the real step handlers; returns what the steps published.
   */
  async function sweepEvents(sweepId: string, options: { rate: number; failShard: (shardId: string) => boolean }) {
    const fx = openSweepFixture({ settings: { shardMaxTasks: 10, tasksPerChild: 10 } });
    fixtures.push(fx);
    await fx.seed({ checkpoints: 1, suites: 1, tasks: 20 });
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    const input = { sweepId, trigger: 'manual' as const, requestedAt: fx.clock.now.toISOString(), modes: ['strict' as const] };
    await driveSweep(steps, fx.ports, input, { script: rateScript(() => options.rate), failShard: (shard) => options.failShard(shard.shardId) });
    return fx.events.map((e) => ({ type: e.type, detail: e.detail }));
  }

  it('a saturated suite and a partial sweep reach the alarm topic once each, as their notices; a succeeded sweep does not', async () => {
    const aws = motoClients();
    const bus = await newBus(aws);
    // Every rule of the stage on the Flywheel bus that targets the alarm topic, all into one queue: what people get.
    const topic = await installTopicRules(aws, bus);
    const events = new EventBridgeEvents(aws.eventbridge, bus);

    // Every shard succeeds and 18 of 20 tasks pass (saturation needs ≥ 20 tasks): the default threshold 0.9 is reached.
    const saturating = await sweepEvents('nightly-0', { rate: 0.9, failShard: () => false });
    expect(saturating.map((e) => e.type)).toEqual(expect.arrayContaining(['suite.saturated', 'sweep.finished', 'notice.raised']));
    await events.publish(saturating);
    // The second shard fails (partial): the first shard's perfect score on half the suite saturates nothing.
    const partial = await sweepEvents('nightly-1', { rate: 1, failShard: (id) => id.endsWith('-1') });
    expect(partial.map((e) => e.type)).not.toContain('suite.saturated');
    await events.publish(partial);
    // All shards succeed and nothing saturates: nobody is paged.
    await events.publish(await sweepEvents('nightly-2', { rate: 0.5, failShard: () => false }));

    // Once each, through notice.raised: neither suite.saturated nor sweep.finished has a rule of its own any more.
    const told = (await toldEvents(aws, topic)).sort((x, y) => x.detail.title.localeCompare(y.detail.title));
    expect(told.map((e) => e['detail-type'])).toEqual(['notice.raised', 'notice.raised']);
    expect(told.map((e) => e.detail)).toEqual([
      expect.objectContaining({ severity: 'alert', dedupKey: 'suite.saturated:suite-0:v1', title: expect.stringMatching(/^Suite suite-0 v1 is saturated: best strict score /) }),
      expect.objectContaining({ severity: 'warning', dedupKey: 'sweep.finished:nightly-1:1-1', title: 'Sweep nightly-1 partial: 1/2 shards', text: expect.stringContaining('Failed shards:') }),
    ]);
  });

  it('a sweep whose every shard failed is told as failed, once', async () => {
    const aws = motoClients();
    const bus = await newBus(aws);
    const topic = await installTopicRules(aws, bus);
    await new EventBridgeEvents(aws.eventbridge, bus).publish(await sweepEvents('nightly-3', { rate: 0.5, failShard: () => true }));
    const [told, ...more] = await toldEvents(aws, topic);
    expect(more).toEqual([]);
    expect(told).toMatchObject({ 'detail-type': 'notice.raised', detail: { severity: 'alert', title: 'Sweep nightly-3 failed: 0/2 shards' } });
  });

  it('a trigger whose sweep cannot start (sweep.refused) reaches the alarm topic with what was wrong', async () => {
    const aws = motoClients();
    const bus = await newBus(aws);
    const refusedQueue = await installRule(aws, bus, ruleMatching(workflows, 'sweep.refused'));
    const fx = openSweepFixture();
    fixtures.push(fx);
    const noWorkflows = { start: async () => ({ executionId: 'never' }), describe: async () => ({}) as never, stop: async () => undefined };
    await startSweepFromTrigger({ ...fx.ports, workflows: noWorkflows }, { trigger: 'schedule', scheduledTime: '2026-12-03T02:00:00Z' }, fx.settings);
    const published = fx.events.filter((e) => e.type === 'sweep.refused').map((e) => ({ type: e.type, detail: e.detail }));
    expect(published).toHaveLength(1);
    await new EventBridgeEvents(aws.eventbridge, bus).publish(published);
    const [notice, ...more] = await delivered(aws, refusedQueue);
    expect(more).toEqual([]);
    expect(notice!.content.title).toBe('Sweep nightly-20261203 did not start');
    expect(notice!.content.description).toContain('The schedule trigger asked for sweep nightly-20261203');
    expect(notice!.content.description).toContain('no active checkpoint is registered');
    expect(notice!.content.nextSteps!.join(' ')).toContain('flywheel sweep start --sweep-id nightly-20261203');
  });

  it('Batch jobs cancelled by the queue time-limit action are reported with the reason; other failures and other queues are not', async () => {
    const aws = motoClients();
    const bus = await newBus(aws);
    const queueIds = Object.keys(resourcesOfType(compute, 'AWS::Batch::JobQueue'));
    const queueArns = Object.fromEntries(queueIds.map((id) => [id, `arn:aws:batch:us-east-1:123456789012:job-queue/${id}`]));
    const reportQueue = await installRule(aws, bus, ruleMatching(compute, 'Batch Job State Change'), queueArns);
    const [gpu, cpu] = Object.values(queueArns);
    const change = (jobName: string, jobQueue: string, status: string, statusReason: string) => ({
      EventBusName: bus,
      Source: 'aws.batch',
      DetailType: 'Batch Job State Change',
      Detail: JSON.stringify({ jobName, jobId: `${jobName}-id`, jobQueue, status, statusReason }),
    });
    await aws.eventbridge.send(
      new PutEventsCommand({
        Entries: [
          // What the AWS Batch user guide says a cancelled job carries, for each reason the queues cancel for.
          change('shard-a', gpu!, 'FAILED', 'Canceled by JobStateTimeLimit action due to reason: CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY'),
          change('forge-b', cpu!, 'FAILED', 'Canceled by JobStateTimeLimit action due to reason: MISCONFIGURATION:JOB_RESOURCE_REQUIREMENT'),
          // Not a time-limit cancel: a job that ran and failed, one still waiting, a queue of someone else.
          change('shard-c', gpu!, 'FAILED', 'Essential container in task exited'),
          change('shard-d', gpu!, 'RUNNABLE', 'CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY - Service cannot fulfill the capacity requested for instance type g6e.xlarge'),
          change('other-e', 'arn:aws:batch:us-east-1:123456789012:job-queue/not-flywheel', 'FAILED', 'Canceled by JobStateTimeLimit action due to reason: CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY'),
        ],
      }),
    );
    const reports = await delivered(aws, reportQueue);
    expect(reports.map((r) => r.content.title).sort()).toEqual([
      'Batch job forge-b was cancelled after too long RUNNABLE',
      'Batch job shard-a was cancelled after too long RUNNABLE',
    ]);
    const shardA = reports.find((r) => r.content.title.includes('shard-a'))!;
    expect(shardA).toMatchObject({ version: '1.0', source: 'custom' });
    expect(shardA.content.description).toBe(`Job shard-a (shard-a-id) on ${gpu}: Canceled by JobStateTimeLimit action due to reason: CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY`);
  });
});

describe('Slack through AWS Chatbot (notifications.slack)', () => {
  const slack = { workspaceId: 'T0123ABCD', channelId: 'C0123ABCD' };
  let outdir: string;
  let app: App;
  let pipeline: Template;
  let stage: FlywheelStage;
  beforeAll(() => {
    outdir = mkdtempSync(join(tmpdir(), 'flywheel-infra-slack-'));
    app = new App({ outdir, context: { ...cdkJsonContext(), stage: 'dev', 'aws:cdk:bundling-stacks': [] } });
    const settings: StageSettings = { ...STAGES.dev, notifications: { slack } };
    stage = new FlywheelStage(app, 'Flywheel-dev', { settings, routes });
    pipeline = Template.fromStack(stage.pipeline);
  }, 120_000);
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it('is off unless the stage sets it', () => {
    expect(STAGES.dev.notifications.slack).toBeUndefined();
    expect(STAGES.prod.notifications.slack).toBeUndefined();
    dev.pipeline.resourceCountIs('AWS::Chatbot::SlackChannelConfiguration', 0);
  });

  it('set: one channel configuration subscribed to the alarm topic, with a role and guardrail that only read alarms', () => {
    const configurations = Object.values(resourcesOfType(pipeline, 'AWS::Chatbot::SlackChannelConfiguration'));
    expect(configurations).toHaveLength(1);
    const topicId = Object.keys(resourcesOfType(pipeline, 'AWS::SNS::Topic'))[0]!;
    const props = configurations[0]!.Properties;
    expect(props).toMatchObject({
      ConfigurationName: 'flywheel-dev-alarms',
      SlackWorkspaceId: slack.workspaceId,
      SlackChannelId: slack.channelId,
      SnsTopicArns: [{ Ref: topicId }],
    });
    // Not the default guardrail (AdministratorAccess): the stack's own read-only policy.
    expect(props.GuardrailPolicies).toHaveLength(1);
    const guardrailId = props.GuardrailPolicies[0].Ref as string;
    const guardrail = resourcesOfType(pipeline, 'AWS::IAM::ManagedPolicy')[guardrailId]!;
    const roleId = props.IamRoleArn['Fn::GetAtt'][0] as string;
    const role = resourcesOfType(pipeline, 'AWS::IAM::Role')[roleId]!;
    expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([expect.objectContaining({ Principal: { Service: 'chatbot.amazonaws.com' } })]);
    expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    const roleStatements = role.Properties.Policies.flatMap((p: { PolicyDocument: { Statement: unknown[] } }) => p.PolicyDocument.Statement);
    for (const statements of [roleStatements, guardrail.Properties.PolicyDocument.Statement]) {
      const actions = statements.flatMap((s: { Action: string | string[] }) => [s.Action].flat());
      expect(actions.sort()).toEqual(['cloudwatch:DescribeAlarms', 'cloudwatch:GetMetricData', 'cloudwatch:GetMetricWidgetImage']);
    }
    // No other policy attaches to the role.
    const attached = Object.values(resourcesOfType(pipeline, 'AWS::IAM::Policy')).filter((p) => JSON.stringify(p.Properties.Roles).includes(roleId));
    expect(attached).toEqual([]);
  });

  it('set: no CDK warning, cdk-nag finds nothing unacknowledged and cfn-lint passes the Pipeline template', async () => {
    const annotations = Annotations.fromStack(stage.pipeline);
    expect(annotations.findWarning('*', Match.anyValue())).toEqual([]);
    expect(annotations.findError('*', Match.anyValue())).toEqual([]);
    expect(nagViolations(app)).toEqual([]);
    const path = join(outdir, 'pipeline-with-slack.template.json');
    writeFileSync(path, JSON.stringify(pipeline.toJSON()));
    const result = await run('cfn-lint', ['--format', 'parseable', path]).then(
      (r) => ({ code: 0, out: r.stdout + r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
    );
    expect(result).toEqual({ code: 0, out: '' });
  }, 90_000);
});
