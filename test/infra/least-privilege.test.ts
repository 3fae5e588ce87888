/**
 * Least privilege on AWS (issue 11, item 5): the sandboxed jobs' privileged containers and how they are contained
 * (launch template, instance role), the job roles' key-family scopes, TerminateJob on job ARNs, an age alarm on every
 * queue and the modes dead-letter depth alarm, the API's web ACL with its rate rules, and the logical ids of the
 * stateful resources, unchanged by any of it.
 */
import { rmSync } from 'node:fs';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORGE_JOB_ACCESS } from '../../lib/forge/infra/forge-job-access.ts';
import { rolloutJobAccess } from '../../lib/rollout/infra/rollout-job-access.ts';
import { JOB_CONTAINER_PRIVILEGED } from '../../lib/constructs/job-image.ts';
import { STAGES } from '../../lib/config/stages.ts';
import { API_WAF_RULES, COUNTED_BODY_RULES } from '../../lib/constructs/api-waf.ts';
import { STATEFUL_LOGICAL_IDS } from '../../lib/stacks/data-stack.ts';
import { resourcesOfType, synthFlywheel, type SynthesizedStage } from './synth-flywheel.ts';

const stageNames = ['dev', 'prod'] as const;
type StageName = (typeof stageNames)[number];
const synthesized: Partial<Record<StageName, { s: SynthesizedStage; compute: Template; workflows: Template }>> = {};

beforeAll(() => {
  for (const name of stageNames) {
    const s = synthFlywheel(name);
    const assembly = s.stage.synth();
    const template = (id: string) => Template.fromJSON(assembly.getStackArtifact(id).template as Record<string, unknown>);
    synthesized[name] = { s, compute: template(s.stage.compute.artifactId), workflows: template(s.stage.workflows.artifactId) };
  }
}, 120_000);
afterAll(() => {
  for (const v of Object.values(synthesized)) rmSync(v.s.outdir, { recursive: true, force: true });
});
const get = (name: StageName) => synthesized[name]!;

/**
 * Logical ids of the stateful resources outside the Data stack (its own are `STATEFUL_LOGICAL_IDS`) as deployed
 * before this change: the modes queues, the job image repositories. A refactor that moves one of them replaces it.
 */
const PINNED_LOGICAL_IDS = {
  pipeline: {
    ModesQueue3CD70F84: 'AWS::SQS::Queue',
    ModesDeadLetterQueue32A1C34B: 'AWS::SQS::Queue',
    DriftWatchQueueDFE0EAA0: 'AWS::SQS::Queue',
    DriftWatchDeadLetterQueueF0ED4985: 'AWS::SQS::Queue',
    ExperimentsProposalsQueueD3331BF1: 'AWS::SQS::Queue',
    ExperimentsProposalsDeadLetterQueue84DD66CA: 'AWS::SQS::Queue',
    ExperimentsFailureModeMetricsQueue5BCD73DC: 'AWS::SQS::Queue',
    ExperimentsFailureModeMetricsDeadLetterQueue135A3190: 'AWS::SQS::Queue',
    SlackBotQueueFAE711BE: 'AWS::SQS::Queue',
    SlackBotDeadLetterQueueB07647D9: 'AWS::SQS::Queue',
  },
  compute: {
    RolloutRepositoryBCCA9BA7: 'AWS::ECR::Repository',
    ForgeRepository4919B5A1: 'AWS::ECR::Repository',
    JobLogs4F84869B: 'AWS::Logs::LogGroup',
    JobUsageQueueA240D0FB: 'AWS::SQS::Queue',
    JobUsageDeadLetterQueue08DA4844: 'AWS::SQS::Queue',
  },
  api: { AccessLogs8B620ECA: 'AWS::Logs::LogGroup' },
} as const;

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}
const actionsOf = (s: Statement) => [s.Action].flat();
const resourcesOf = (s: Statement) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]);
/** `{ Fn::Join: ['', [<bucket arn>, '/sweeps/*']] }` → `sweeps/*`; a bare ARN → ''. */
const keyPattern = (resource: unknown) => {
  const join = (resource as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  const last = join?.[1].at(-1);
  return typeof last === 'string' ? last.replace(/^\//, '') : '';
};

/** The statements of the role whose logical id starts with `prefix` (its default policy and any other attached). */
function roleStatements(template: Template, prefix: string): Statement[] {
  const roleId = Object.keys(template.findResources('AWS::IAM::Role')).find((id) => id.startsWith(prefix));
  expect(roleId, prefix).toBeDefined();
  return Object.values(resourcesOfType(template, 'AWS::IAM::Policy'))
    .filter((p) => JSON.stringify(p.Properties.Roles).includes(`"${roleId}"`))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
}

/** Alarm actions that are the alarm topic: `Ref` in the Pipeline stack, the Pipeline stack's output of it elsewhere. */
function toTopic(actions: unknown, topicId: string): boolean {
  const text = JSON.stringify(actions);
  return text === JSON.stringify([{ Ref: topicId }]) || (Array.isArray(actions) && actions.length === 1 && /Fn::GetStackOutput|Fn::ImportValue/.test(text) && text.includes(`OutputRef${topicId}`));
}

/** The queue an alarm's QueueName dimension names: `{ Fn::GetAtt: [Q, 'QueueName'] }`, or another stack's output of it. */
function alarmQueue(alarm: { Properties: Record<string, any> }): string | undefined {
  const value = alarm.Properties.Dimensions?.find((d: { Name: string }) => d.Name === 'QueueName')?.Value;
  if (value?.['Fn::GetAtt']) return value['Fn::GetAtt'][0];
  const output = value?.['Fn::GetStackOutput']?.OutputName ?? JSON.stringify(value?.['Fn::ImportValue'] ?? '');
  return /FnGetAtt(.+?)QueueName/.exec(String(output))?.[1];
}

describe.each(stageNames)('least privilege (%s)', (name) => {
  const settings = STAGES[name];

  describe('rollout and forge containers', () => {
    it('run privileged (the sandbox needs what Batch offers no finer knob for), with the reason in the code', async () => {
      const { readFile } = await import('node:fs/promises');
      const source = await readFile(new URL('../../lib/constructs/job-image.ts', import.meta.url), 'utf8');
      expect(JOB_CONTAINER_PRIVILEGED).toBe(true);
      // The reason names what an unprivileged container lacks and what is (and is not) contained.
      for (const needle of ['seccomp', 'CAP_SYS_ADMIN', 'procfs', 'cgroup', 'dockerSecurityOptions', 'host network mode', 'Not mitigated']) {
        expect(source, needle).toContain(needle);
      }
      for (const d of Object.values(resourcesOfType(get(name).compute, 'AWS::Batch::JobDefinition'))) {
        expect(d.Properties.ContainerProperties.Privileged).toBe(JOB_CONTAINER_PRIVILEGED);
      }
    });

    it('instances: IMDSv2 required with a hop limit of 1, on both pools', () => {
      const compute = get(name).compute;
      const templates = resourcesOfType(compute, 'AWS::EC2::LaunchTemplate');
      const environments = Object.values(resourcesOfType(compute, 'AWS::Batch::ComputeEnvironment'));
      expect(environments).toHaveLength(2);
      for (const env of environments) {
        const ref = env.Properties.ComputeResources.LaunchTemplate?.LaunchTemplateId?.Ref as string;
        expect(templates[ref], 'compute environment launch template').toBeDefined();
        expect(templates[ref]!.Properties.LaunchTemplateData.MetadataOptions).toMatchObject({ HttpTokens: 'required', HttpPutResponseHopLimit: 1, HttpEndpoint: 'enabled' });
        // No user data: the ECS-optimized AMI as Batch configures it.
        expect(templates[ref]!.Properties.LaunchTemplateData.UserData).toBeUndefined();
      }
    });

    it('the instance role is the ECS agent policy alone: no inline policy, no data access', () => {
      const compute = get(name).compute;
      const roles = Object.entries(resourcesOfType(compute, 'AWS::IAM::Role')).filter(([id]) => /InstanceProfileRole/.test(id));
      expect(roles).toHaveLength(2);
      for (const [id, role] of roles) {
        expect(JSON.stringify(role.Properties.ManagedPolicyArns)).toContain('service-role/AmazonEC2ContainerServiceforEC2Role');
        expect(role.Properties.ManagedPolicyArns).toHaveLength(1);
        expect(role.Properties.Policies).toBeUndefined();
        const attached = Object.values(resourcesOfType(compute, 'AWS::IAM::Policy')).filter((p) => JSON.stringify(p.Properties.Roles).includes(`"${id}"`));
        expect(attached, id).toEqual([]);
      }
    });
  });

  describe('job roles', () => {
    const cases = [
      ['RolloutJobRole', rolloutJobAccess(settings.jobReadPrefixes)],
      ['ForgeJobRole', FORGE_JOB_ACCESS],
    ] as const;

    it.each(cases)('%s: no wildcard action, no delete, no update or batch write, nothing on the whole bucket or on other services', (role) => {
      const statements = roleStatements(get(name).compute, role);
      expect(statements.length).toBeGreaterThan(0);
      for (const s of statements) {
        for (const action of actionsOf(s)) {
          expect(action).not.toContain('*');
          expect(action).toMatch(/^(s3|dynamodb):/);
          expect(action).not.toMatch(/Delete|UpdateItem|BatchWriteItem|Scan|PutObjectAcl|PutBucket/);
        }
        if (s.Effect !== 'Allow') continue;
        for (const resource of resourcesOf(s)) {
          expect(JSON.stringify(resource)).not.toBe('"*"');
          // Object actions name a key pattern, never `<bucket>/*`.
          if (actionsOf(s).some((a) => a === 's3:GetObject' || a === 's3:PutObject')) {
            expect(keyPattern(resource)).not.toBe('*');
            expect(keyPattern(resource)).toMatch(/^[a-z][a-z/-]*(\/\*|\*)|^[a-z]+\/\*\/[a-z-]+/);
          }
        }
      }
    });

    it.each(cases)('%s: blobs under its key patterns only, and the job never rewrites what it is told to run', (role, access) => {
      const statements = roleStatements(get(name).compute, role);
      const patterns = (action: string, effect = 'Allow') =>
        statements.filter((s) => s.Effect === effect && actionsOf(s).includes(action)).flatMap(resourcesOf).map(keyPattern).sort();
      expect(patterns('s3:GetObject')).toEqual([...access.blobs.read].sort());
      expect(patterns('s3:PutObject')).toEqual([...access.blobs.write].sort());
      expect(patterns('s3:PutObject', 'Deny')).toEqual([...access.blobs.denyWrite].sort());
      // Key names only (S3 answers 404, not 403, for a missing key): on the bucket itself.
      expect(patterns('s3:ListBucket')).toEqual(['']);
    });

    it.each(cases)('%s: records by partition-key prefix (dynamodb:LeadingKeys) only', (role, access) => {
      const statements = roleStatements(get(name).compute, role).filter((s) => actionsOf(s).some((a) => a.startsWith('dynamodb:')));
      expect(statements.length).toBeGreaterThan(0);
      for (const s of statements) {
        expect(s.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'], JSON.stringify(s)).toBeDefined();
        const onIndex = JSON.stringify(s.Resource).includes('/index/');
        // A table statement also demands the key be present (an empty set would pass ForAllValues).
        if (!onIndex) expect(s.Condition?.['Null']).toEqual({ 'dynamodb:LeadingKeys': 'false' });
        else expect(actionsOf(s)).toEqual(['dynamodb:Query']);
      }
      const allowed = (action: string) =>
        statements
          .filter((s) => actionsOf(s).includes(action) && !JSON.stringify(s.Resource).includes('/index/'))
          .flatMap((s) => s.Condition!['ForAllValues:StringLike']!['dynamodb:LeadingKeys'] as string[])
          .sort();
      expect(allowed('dynamodb:GetItem')).toEqual([...access.records.read].sort());
      expect(allowed('dynamodb:Query')).toEqual([...access.records.read].sort());
      expect(allowed('dynamodb:PutItem')).toEqual([...access.records.write].sort());
      // No job reads or writes feedback, failure modes or the registry's checkpoints, suites, sweeps and results.
      for (const family of ['FEEDBACK#', 'CHECKPOINT#', 'SUITE#', 'SWEEP#', 'RESULT#', 'MODE']) {
        expect([...allowed('dynamodb:GetItem'), ...allowed('dynamodb:PutItem')].some((p) => p.startsWith(family)), family).toBe(false);
      }
    });

    it('jobReadPrefixes must be plain key prefixes ending in /', () => {
      expect(() => rolloutJobAccess(['checkpoints/', 'models/weights/'])).not.toThrow();
      for (const bad of ['', '*', 'checkpoints', 'checkpoints/*', '/checkpoints/', 'a//']) {
        expect(() => rolloutJobAccess([bad]), bad).toThrow(/jobReadPrefixes/);
      }
    });

    it('the rollout job reads the stage\'s checkpoint and suite prefixes, writes its results, and touches no feedback or raw archive', () => {
      const access = rolloutJobAccess(settings.jobReadPrefixes);
      for (const prefix of settings.jobReadPrefixes) expect(access.blobs.read).toContain(`${prefix}*`);
      for (const forbidden of ['raw/', 'feedback/', 'trajectories/feedback/', 'modes/', 'ingest/']) {
        expect([...access.blobs.read, ...access.blobs.write].some((p) => p.startsWith(forbidden)), forbidden).toBe(false);
      }
      expect(access.blobs.write).toEqual(expect.arrayContaining(['sweeps/*/results/*', 'trajectories/attempts/*', 'grading/*']));
      expect(access.records).toEqual({ read: ['EVAL#*'], write: ['EVAL#*', 'ROLLOUT#*'] });
    });
  });

  it('batch:TerminateJob is granted on job ARNs only; no role gets CancelJob or TerminateJob on *', () => {
    const { workflows, compute, s } = get(name);
    for (const template of [workflows, compute, s.api, s.pipeline, s.data]) {
      for (const policy of Object.values(resourcesOfType(template, 'AWS::IAM::Policy'))) {
        for (const st of policy.Properties.PolicyDocument.Statement as Statement[]) {
          if (!actionsOf(st).some((a) => a === 'batch:TerminateJob' || a === 'batch:CancelJob')) continue;
          expect(actionsOf(st)).toEqual(['batch:TerminateJob']);
          for (const r of resourcesOf(st)) expect(JSON.stringify(r)).toMatch(/:batch:.*:job\/\*"/);
        }
      }
    }
    const terminate = Object.values(resourcesOfType(workflows, 'AWS::IAM::Policy'))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[])
      .filter((st) => actionsOf(st).includes('batch:TerminateJob'));
    // The sweep's, the judge derivation's and the training run's state machines (each stops the .sync job it submitted).
    expect(terminate).toHaveLength(3);
  });

  describe('queue alarms', () => {
    it('every queue has an age-of-oldest-message alarm to the alarm topic, with the stage threshold', () => {
      const { s, compute, workflows } = get(name);
      const all = [s.data, s.pipeline, s.api, compute, workflows];
      const [topicId] = Object.keys(s.pipeline.findResources('AWS::SNS::Topic'));
      // The alarms live in the Pipeline stack, beside the topic, except compute accounting's, beside the job queues its
      // rule names in the Compute stack (which takes the topic from the Pipeline stack); every queue needs one.
      const ageAlarms = [s.pipeline, compute].flatMap((t) => Object.values(resourcesOfType(t, 'AWS::CloudWatch::Alarm'))).filter((a) => a.Properties.MetricName === 'ApproximateAgeOfOldestMessage');
      const queues = all.flatMap((t) => Object.keys(t.findResources('AWS::SQS::Queue')));
      expect(queues).toHaveLength(14);
      expect(ageAlarms).toHaveLength(14);
      const expected: Record<string, number> = {
        [STATEFUL_LOGICAL_IDS.ingestQueue]: settings.alarms.queueAgeSeconds.ingest,
        [STATEFUL_LOGICAL_IDS.ingestDeadLetterQueue]: settings.alarms.queueAgeSeconds.deadLetter,
        ModesQueue3CD70F84: settings.alarms.queueAgeSeconds.modes,
        ModesDeadLetterQueue32A1C34B: settings.alarms.queueAgeSeconds.deadLetter,
        DriftWatchQueueDFE0EAA0: settings.alarms.queueAgeSeconds.modes,
        DriftWatchDeadLetterQueueF0ED4985: settings.alarms.queueAgeSeconds.deadLetter,
        ExperimentsProposalsQueueD3331BF1: settings.alarms.queueAgeSeconds.modes,
        ExperimentsProposalsDeadLetterQueue84DD66CA: settings.alarms.queueAgeSeconds.deadLetter,
        ExperimentsFailureModeMetricsQueue5BCD73DC: settings.alarms.queueAgeSeconds.modes,
        ExperimentsFailureModeMetricsDeadLetterQueue135A3190: settings.alarms.queueAgeSeconds.deadLetter,
        SlackBotQueueFAE711BE: settings.alarms.queueAgeSeconds.ingest,
        SlackBotDeadLetterQueueB07647D9: settings.alarms.queueAgeSeconds.deadLetter,
        JobUsageQueueA240D0FB: settings.alarms.queueAgeSeconds.modes,
        JobUsageDeadLetterQueue08DA4844: settings.alarms.queueAgeSeconds.deadLetter,
      };
      expect(Object.keys(expected).sort()).toEqual([...queues].sort());
      for (const queue of queues) {
        const alarms = ageAlarms.filter((a) => alarmQueue(a) === queue);
        expect(alarms, queue).toHaveLength(1);
        expect(alarms[0]!.Properties).toMatchObject({
          Namespace: 'AWS/SQS',
          Statistic: 'Maximum',
          Threshold: expected[queue],
          ComparisonOperator: 'GreaterThanThreshold',
        });
        expect(toTopic(alarms[0]!.Properties.AlarmActions, topicId!), queue).toBe(true);
        expect(toTopic(alarms[0]!.Properties.OKActions, topicId!), queue).toBe(true);
      }
    });

    it('every dead-letter queue (ingest, modes, drift watch, experiment proposals and failure-mode rows, job usage) has a depth alarm to the alarm topic', () => {
      const { s, compute } = get(name);
      const [topicId] = Object.keys(s.pipeline.findResources('AWS::SNS::Topic'));
      const depth = [s.pipeline, compute].flatMap((t) => Object.values(resourcesOfType(t, 'AWS::CloudWatch::Alarm'))).filter((a) => a.Properties.MetricName === 'ApproximateNumberOfMessagesVisible');
      expect(depth.map(alarmQueue).sort()).toEqual([
        STATEFUL_LOGICAL_IDS.ingestDeadLetterQueue,
        'ModesDeadLetterQueue32A1C34B',
        'DriftWatchDeadLetterQueueF0ED4985',
        'ExperimentsProposalsDeadLetterQueue84DD66CA',
        'ExperimentsFailureModeMetricsDeadLetterQueue135A3190',
        'SlackBotDeadLetterQueueB07647D9',
        'JobUsageDeadLetterQueue08DA4844',
      ].sort());
      for (const alarm of depth) {
        expect(alarm.Properties).toMatchObject({ Threshold: settings.alarms.deadLetterDepthThreshold, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
        expect(toTopic(alarm.Properties.AlarmActions, topicId!)).toBe(true);
      }
    });
  });

  describe('web ACL in front of the API', () => {
    const acl = () => {
      const acls = Object.entries(resourcesOfType(get(name).s.api, 'AWS::WAFv2::WebACL'));
      expect(acls).toHaveLength(1);
      return acls[0]!;
    };

    it('regional, associated with the API stage', () => {
      const [aclId, webAcl] = acl();
      expect(webAcl.Properties).toMatchObject({ Scope: 'REGIONAL', DefaultAction: { Allow: {} } });
      const api = get(name).s.api;
      const [restApiId] = Object.keys(api.findResources('AWS::ApiGateway::RestApi'));
      const [stageId] = Object.keys(api.findResources('AWS::ApiGateway::Stage'));
      const associations = Object.values(resourcesOfType(api, 'AWS::WAFv2::WebACLAssociation'));
      expect(associations).toHaveLength(1);
      expect(associations[0]!.Properties.WebACLArn).toEqual({ 'Fn::GetAtt': [aclId, 'Arn'] });
      const arn = JSON.stringify(associations[0]!.Properties.ResourceArn);
      expect(arn).toContain(`{"Ref":"${restApiId}"}`);
      expect(arn).toContain(`/stages/",{"Ref":"${stageId}"}`);
    });

    it('rate rules per client IP with the stage limits (all requests, and keyless ones), answering 429', () => {
      const [, webAcl] = acl();
      const rules = webAcl.Properties.Rules as Array<Record<string, any>>;
      expect(rules.map((r) => r.Name)).toEqual([...API_WAF_RULES]);
      expect(rules.map((r) => r.Priority)).toEqual(API_WAF_RULES.map((_, i) => i));
      const rule = (n: string) => rules.find((r) => r.Name === n)!;
      const all = rule('RateLimitPerIp');
      expect(all.Statement.RateBasedStatement).toEqual({ AggregateKeyType: 'IP', Limit: settings.api.waf.requestsPerIpPer5Minutes, EvaluationWindowSec: 300 });
      const keyless = rule('RateLimitKeylessPerIp');
      expect(keyless.Statement.RateBasedStatement).toMatchObject({ AggregateKeyType: 'IP', Limit: settings.api.waf.keylessRequestsPerIpPer5Minutes });
      expect(JSON.stringify(keyless.Statement.RateBasedStatement.ScopeDownStatement)).toMatch(/x-api-key.*authorization/);
      expect(settings.api.waf.keylessRequestsPerIpPer5Minutes).toBeLessThan(settings.api.waf.requestsPerIpPer5Minutes);
      for (const r of [all, keyless]) {
        expect(r.Action.Block.CustomResponse).toMatchObject({ ResponseCode: 429, ResponseHeaders: [{ Name: 'Retry-After', Value: expect.stringMatching(/^\d+$/) }] });
        expect(r.VisibilityConfig).toMatchObject({ CloudWatchMetricsEnabled: true, SampledRequestsEnabled: true });
      }
      const body = JSON.parse(webAcl.Properties.CustomResponseBodies[all.Action.Block.CustomResponse.CustomResponseBodyKey].Content);
      expect(body.error).toBe('Flywheel.Throttled');
    });

    it('AWS managed common rules and known bad inputs, their body rules counted (bodies carry code)', () => {
      const [, webAcl] = acl();
      const rules = webAcl.Properties.Rules as Array<Record<string, any>>;
      for (const [group, counted] of Object.entries(COUNTED_BODY_RULES)) {
        const rule = rules.find((r) => r.Statement.ManagedRuleGroupStatement?.Name === group)!;
        expect(rule, group).toBeDefined();
        expect(rule.OverrideAction).toEqual({ None: {} });
        expect(rule.Statement.ManagedRuleGroupStatement.RuleActionOverrides).toEqual(counted.map((n) => ({ Name: n, ActionToUse: { Count: {} } })));
      }
    });

    it('logs to an aws-waf-logs-* group with the API key and authorization headers redacted', () => {
      const api = get(name).s.api;
      const [aclId] = acl();
      const logging = Object.values(resourcesOfType(api, 'AWS::WAFv2::LoggingConfiguration'));
      expect(logging).toHaveLength(1);
      expect(logging[0]!.Properties.ResourceArn).toEqual({ 'Fn::GetAtt': [aclId, 'Arn'] });
      expect(logging[0]!.Properties.RedactedFields).toEqual([{ SingleHeader: { Name: 'x-api-key' } }, { SingleHeader: { Name: 'authorization' } }]);
      const groups = Object.values(resourcesOfType(api, 'AWS::Logs::LogGroup')).filter((g) => String(g.Properties.LogGroupName ?? '').startsWith('aws-waf-logs-'));
      expect(groups).toHaveLength(1);
      expect(groups[0]!.Properties.RetentionInDays).toBe(settings.logRetentionDays);
    });
  });

  it('stateful logical ids are unchanged (Data stack pins, modes queues, job repositories and log groups)', () => {
    const { s, compute } = get(name);
    const data = s.data.toJSON().Resources as Record<string, { Type: string }>;
    for (const id of Object.values(STATEFUL_LOGICAL_IDS)) expect(data[id], id).toBeDefined();
    const templates = { pipeline: s.pipeline, compute, api: s.api };
    for (const [stack, ids] of Object.entries(PINNED_LOGICAL_IDS)) {
      const resources = templates[stack as keyof typeof templates].toJSON().Resources as Record<string, { Type: string }>;
      for (const [id, type] of Object.entries(ids)) expect(resources[id]?.Type, `${stack}: ${id}`).toBe(type);
      // Nothing of these types appears under another id.
      for (const type of new Set(Object.values(ids))) {
        const found = Object.entries(resources).filter(([, r]) => r.Type === type && type !== 'AWS::Logs::LogGroup').map(([id]) => id);
        for (const id of found) expect(Object.keys(ids), `${stack}: ${id}`).toContain(id);
      }
    }
  });
});
