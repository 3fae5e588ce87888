import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { App, Stack, Stage } from 'aws-cdk-lib';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../lib/api/routes.ts';
import { INGEST_PROCESSOR_TIMEOUT_SECONDS } from '../../lib/config/ingest-timing.ts';
import { STAGES } from '../../lib/config/stages.ts';
import { STATEFUL_LOGICAL_IDS } from '../../lib/stacks/data-stack.ts';
import { FlywheelStage } from '../../lib/stacks/flywheel-stage.ts';
import { acknowledgments, cdkJsonContext, nagFindingsIgnoringAcknowledgments, nagViolations, resourcesOfType, synthFlywheel, type SynthesizedStage } from './synth-flywheel.ts';

const run = promisify(execFile);
const synthesized: Partial<Record<'dev' | 'prod', SynthesizedStage>> = {};
const stageNames = ['dev', 'prod'] as const;

beforeAll(() => {
  for (const name of stageNames) synthesized[name] = synthFlywheel(name);
});
afterAll(() => {
  for (const s of Object.values(synthesized)) rmSync(s.outdir, { recursive: true, force: true });
});

function get(name: 'dev' | 'prod'): SynthesizedStage {
  const s = synthesized[name];
  if (!s) throw new Error(`stage ${name} was not synthesized`);
  return s;
}

const ref = (logicalId: string) => ({ Ref: logicalId });
const arnOf = (logicalId: string) => ({ 'Fn::GetAtt': [logicalId, 'Arn'] });

describe.each(stageNames)('data stack (%s)', (name) => {
  const settings = STAGES[name];
  const data = () => get(name).data;

  it('pins the logical id of every stateful resource', () => {
    const resources = data().toJSON().Resources as Record<string, { Type: string }>;
    expect(resources[STATEFUL_LOGICAL_IDS.recordsTable]?.Type).toBe('AWS::DynamoDB::Table');
    expect(resources[STATEFUL_LOGICAL_IDS.artifactsBucket]?.Type).toBe('AWS::S3::Bucket');
    expect(resources[STATEFUL_LOGICAL_IDS.accessLogsBucket]?.Type).toBe('AWS::S3::Bucket');
    expect(resources[STATEFUL_LOGICAL_IDS.ingestQueue]?.Type).toBe('AWS::SQS::Queue');
    expect(resources[STATEFUL_LOGICAL_IDS.ingestDeadLetterQueue]?.Type).toBe('AWS::SQS::Queue');
    // Nothing stateful outside the pinned list.
    for (const type of ['AWS::DynamoDB::Table', 'AWS::S3::Bucket', 'AWS::SQS::Queue']) {
      for (const id of Object.keys(data().findResources(type))) {
        expect(Object.values(STATEFUL_LOGICAL_IDS)).toContain(id);
      }
    }
  });

  it('keeps or deletes stateful resources as the stage says, with termination protection where data is kept', () => {
    const policy = settings.retainData ? 'Retain' : 'Delete';
    for (const id of Object.values(STATEFUL_LOGICAL_IDS)) {
      const resource = (data().toJSON().Resources as Record<string, { DeletionPolicy?: string; UpdateReplacePolicy?: string }>)[id];
      expect(resource?.DeletionPolicy, id).toBe(policy);
      expect(resource?.UpdateReplacePolicy, id).toBe(policy);
    }
    expect(get(name).stage.data.terminationProtection).toBe(settings.retainData);
  });

  it('records table: pk/sk, two GSIs projecting all, on demand, PITR, encrypted, TTL on expiresAt', () => {
    data().hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      AttributeDefinitions: Match.arrayWith(
        ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk'].map((a) => ({ AttributeName: a, AttributeType: 'S' })),
      ),
      GlobalSecondaryIndexes: ['gsi1', 'gsi2'].map((index) => ({
        IndexName: index,
        KeySchema: [
          { AttributeName: `${index}pk`, KeyType: 'HASH' },
          { AttributeName: `${index}sk`, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      })),
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      DeletionProtectionEnabled: settings.retainData,
    });
  });

  it('artifacts bucket: encrypted, public access blocked, versioned, access-logged, lifecycle per stage', () => {
    const bucket = resourcesOfType(data(), 'AWS::S3::Bucket')[STATEFUL_LOGICAL_IDS.artifactsBucket]?.Properties;
    expect(bucket?.BucketEncryption).toEqual({
      ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
    });
    expect(bucket?.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(bucket?.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    expect(bucket?.LoggingConfiguration?.DestinationBucketName).toEqual(ref(STATEFUL_LOGICAL_IDS.accessLogsBucket));

    const rules = bucket?.LifecycleConfiguration?.Rules as Array<Record<string, any>>;
    const raw = rules.find((r) => r.Id === 'raw-feedback-tiering');
    expect(raw?.Prefix).toBe('raw/feedback/');
    expect(raw?.Transitions).toEqual([
      { StorageClass: 'STANDARD_IA', TransitionInDays: settings.rawArchiveInfrequentAccessDays },
    ]);
    expect(raw?.ExpirationInDays).toBe(settings.rawArchiveExpireDays > 0 ? settings.rawArchiveExpireDays : undefined);
    const spool = rules.find((r) => r.Id === 'expire-ingest-spool');
    expect(spool?.Prefix).toBe('spool/ingest/');
    // Outlives a message's 4 days in the queue plus 14 in the dead-letter queue.
    expect(spool?.ExpirationInDays).toBeGreaterThan(4 + settings.deadLetterRetentionDays);
    const noncurrent = rules.find((r) => r.Id === 'noncurrent-versions');
    expect(noncurrent?.NoncurrentVersionExpiration).toEqual({ NoncurrentDays: settings.noncurrentVersionDays });
    const abort = rules.find((r) => r.Id === 'abort-incomplete-uploads');
    expect(abort?.AbortIncompleteMultipartUpload).toEqual({ DaysAfterInitiation: 7 });
  });

  it('both buckets deny requests without TLS', () => {
    for (const bucket of [STATEFUL_LOGICAL_IDS.artifactsBucket, STATEFUL_LOGICAL_IDS.accessLogsBucket]) {
      data().hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: ref(bucket),
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Deny',
              Action: 's3:*',
              Principal: { AWS: '*' },
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            }),
          ]),
        },
      });
      const bucketProps = resourcesOfType(data(), 'AWS::S3::Bucket')[bucket]?.Properties;
      expect(bucketProps?.PublicAccessBlockConfiguration?.BlockPublicPolicy).toBe(true);
    }
  });

  it('ingestion queue: encrypted, redrives to the dead-letter queue, visibility ≥ 6 × processor timeout', () => {
    const queues = resourcesOfType(data(), 'AWS::SQS::Queue');
    const queue = queues[STATEFUL_LOGICAL_IDS.ingestQueue]?.Properties;
    const dlq = queues[STATEFUL_LOGICAL_IDS.ingestDeadLetterQueue]?.Properties;
    expect(queue?.SqsManagedSseEnabled).toBe(true);
    expect(dlq?.SqsManagedSseEnabled).toBe(true);
    expect(queue?.RedrivePolicy).toEqual({
      deadLetterTargetArn: arnOf(STATEFUL_LOGICAL_IDS.ingestDeadLetterQueue),
      maxReceiveCount: settings.maxReceiveCount,
    });
    expect(dlq?.MessageRetentionPeriod).toBe(settings.deadLetterRetentionDays * 86_400);
    expect(dlq?.MessageRetentionPeriod).toBeGreaterThan(queue?.MessageRetentionPeriod as number);

    const [processor] = Object.values(resourcesOfType(get(name).pipeline, 'AWS::Lambda::Function'));
    const processorTimeout = processor?.Properties.Timeout as number;
    expect(processorTimeout).toBe(INGEST_PROCESSOR_TIMEOUT_SECONDS);
    expect(queue?.VisibilityTimeout).toBeGreaterThanOrEqual(6 * processorTimeout);

    for (const id of [STATEFUL_LOGICAL_IDS.ingestQueue, STATEFUL_LOGICAL_IDS.ingestDeadLetterQueue]) {
      data().hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [ref(id)],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      });
    }
  });
});

describe.each(stageNames)('functions (%s)', (name) => {
  const settings = STAGES[name];
  const functions = () => ({
    ...resourcesOfType(get(name).pipeline, 'AWS::Lambda::Function'),
    ...resourcesOfType(get(name).api, 'AWS::Lambda::Function'),
  });

  it('one function per distinct route lambda and the key authorizer, plus the processor, the failure-mode classifier, the drift watch, the experiment schedule and consumers, the Slack worker and the notices schedule', () => {
    const distinct = new Set(routes.map((r) => r.lambda));
    expect(Object.keys(resourcesOfType(get(name).api, 'AWS::Lambda::Function'))).toHaveLength(distinct.size + 1);
    expect(Object.keys(resourcesOfType(get(name).pipeline, 'AWS::Lambda::Function'))).toHaveLength(8);
  });

  it('every function: Node.js 24 on ARM64, traced, source maps, the house environment, its own log group', () => {
    const fns = Object.values(functions());
    expect(fns.length).toBeGreaterThan(0);
    for (const fn of fns) {
      const p = fn.Properties;
      expect(p.Runtime).toBe('nodejs24.x');
      expect(p.Architectures).toEqual(['arm64']);
      expect(p.TracingConfig).toEqual({ Mode: 'Active' });
      expect(p.Handler).toBe('index.handler');
      const env = p.Environment.Variables as Record<string, unknown>;
      expect(env.NODE_OPTIONS).toBe('--enable-source-maps');
      expect(env.FLYWHEEL_STAGE).toBe(name);
      expect(env.POWERTOOLS_METRICS_NAMESPACE).toBe('Flywheel');
      expect(env.POWERTOOLS_SERVICE_NAME).toMatch(/^flywheel-/);
      for (const key of ['FLYWHEEL_TABLE', 'FLYWHEEL_BUCKET', 'FLYWHEEL_INGEST_QUEUE_URL', 'FLYWHEEL_INGEST_DLQ_URL', 'FLYWHEEL_EVENT_BUS']) {
        expect(env[key], key).toBeDefined();
      }
      expect(p.LoggingConfig?.LogGroup).toBeDefined();
    }
    for (const template of [get(name).pipeline, get(name).api]) {
      for (const group of Object.values(resourcesOfType(template, 'AWS::Logs::LogGroup'))) {
        expect(group.Properties.RetentionInDays).toBe(settings.logRetentionDays);
      }
    }
  });

  it('no function role carries a managed policy or a wildcard action', () => {
    for (const template of [get(name).pipeline, get(name).api]) {
      for (const [id, role] of Object.entries(resourcesOfType(template, 'AWS::IAM::Role'))) {
        if (id.includes('CloudWatchRole')) continue; // API Gateway's account-level logging role
        expect(role.Properties.ManagedPolicyArns, id).toBeUndefined();
      }
      for (const policy of Object.values(resourcesOfType(template, 'AWS::IAM::Policy'))) {
        for (const statement of policy.Properties.PolicyDocument.Statement as Array<{ Action: string | string[] }>) {
          for (const action of [statement.Action].flat()) expect(action).not.toContain('*');
        }
      }
    }
  });
});

describe.each(stageNames)('pipeline stack (%s)', (name) => {
  const settings = STAGES[name];
  const pipeline = () => get(name).pipeline;

  it('processor consumes the ingestion queue in batches and reports partial failures', () => {
    pipeline().hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: 10,
      MaximumBatchingWindowInSeconds: 5,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      EventSourceArn: Match.anyValue(),
    });
  });

  it('has the flywheel-<stage> event bus', () => {
    pipeline().hasResourceProperties('AWS::Events::EventBus', { Name: `flywheel-${name}` });
  });

  it('alarm topic: KMS encrypted (rotating key CloudWatch may use), TLS only', () => {
    const [topicId] = Object.keys(pipeline().findResources('AWS::SNS::Topic'));
    const [keyId] = Object.keys(pipeline().findResources('AWS::KMS::Key'));
    pipeline().hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: arnOf(keyId as string) });
    pipeline().hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({ Principal: { Service: 'cloudwatch.amazonaws.com' }, Action: ['kms:Decrypt', 'kms:GenerateDataKey'] }),
        ]),
      },
    });
    pipeline().hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [ref(topicId as string)],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
    pipeline().resourceCountIs('AWS::SNS::Subscription', settings.alarms.emails.length);
  });

  it('alarms on the dead-letter queue depth, to the topic', () => {
    const [topicId] = Object.keys(pipeline().findResources('AWS::SNS::Topic'));
    pipeline().hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: Match.anyValue() }],
      Threshold: settings.alarms.deadLetterDepthThreshold,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      AlarmActions: [ref(topicId as string)],
    });
  });

  it('alarms on the errors of every function, processor and API handlers alike', () => {
    for (const template of [get(name).pipeline, get(name).api]) {
      const alarms = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm')).filter(
        (a) => a.Properties.MetricName === 'Errors',
      );
      const fnIds = Object.keys(template.findResources('AWS::Lambda::Function'));
      expect(alarms.map((a) => a.Properties.Dimensions[0].Value).sort()).toEqual(fnIds.map(ref).sort());
      for (const alarm of alarms) {
        expect(alarm.Properties).toMatchObject({
          Namespace: 'AWS/Lambda',
          Threshold: settings.alarms.handlerErrorThreshold,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        });
        expect(alarm.Properties.AlarmActions).toHaveLength(1);
      }
    }
  });
});

describe.each(stageNames)('api stack (%s)', (name) => {
  const settings = STAGES[name];
  const api = () => get(name).api;

  it('a Regional REST API with one method per route, each requiring an API key but the open ones', () => {
    api().hasResourceProperties('AWS::ApiGateway::RestApi', { EndpointConfiguration: { Types: ['REGIONAL'] }, MinimumCompressionSize: 1024 });
    const methods = Object.values(resourcesOfType(api(), 'AWS::ApiGateway::Method'));
    expect(methods).toHaveLength(routes.length);
    // Open routes (the console's files, Slack's signed requests) take no key; every other method needs one.
    const keyRequired = new Map(routes.map((r) => [r.operationId, r.apiKeyRequired]));
    for (const method of methods) expect(method.Properties.ApiKeyRequired, method.Properties.OperationName).toBe(keyRequired.get(method.Properties.OperationName));
    expect(methods.filter((m) => m.Properties.OperationName === 'getConsole' || m.Properties.OperationName === 'getConsoleAsset').map((m) => m.Properties.ApiKeyRequired)).toEqual([false, false]);
    expect(methods.map((m) => m.Properties.OperationName).sort()).toEqual(routes.map((r) => r.operationId).sort());
    const pathParts = Object.values(resourcesOfType(api(), 'AWS::ApiGateway::Resource')).map((r) => r.Properties.PathPart);
    for (const route of routes) {
      for (const part of route.path.split('/').filter(Boolean)) expect(pathParts).toContain(part);
    }
  });

  it('usage plan throttles per stage and names the API stage', () => {
    api().hasResourceProperties('AWS::ApiGateway::UsagePlan', {
      Throttle: { RateLimit: settings.api.rateLimit, BurstLimit: settings.api.burstLimit },
      Quota: settings.api.dailyQuota > 0 ? { Limit: settings.api.dailyQuota, Period: 'DAY' } : Match.absent(),
      ApiStages: [Match.objectLike({ Stage: Match.anyValue() })],
    });
  });

  it('stage: access logs, execution logs, tracing, stage-wide throttle', () => {
    api().hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: name,
      AccessLogSetting: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('apiKeyId') },
      TracingEnabled: true,
      MethodSettings: [
        Match.objectLike({
          LoggingLevel: 'ERROR',
          DataTraceEnabled: false,
          ThrottlingRateLimit: settings.api.rateLimit,
          ThrottlingBurstLimit: settings.api.burstLimit,
        }),
      ],
    });
  });

  it.each([
    ['THROTTLED', '429', 'Flywheel.Throttled', true],
    ['QUOTA_EXCEEDED', '429', 'Flywheel.Throttled', true],
    ['INVALID_API_KEY', '403', 'Flywheel.Forbidden', false],
    ['MISSING_AUTHENTICATION_TOKEN', '403', 'Flywheel.Forbidden', false],
    ['REQUEST_TOO_LARGE', '413', 'Flywheel.PayloadTooLarge', false],
  ])('gateway response %s answers %s as JSON', (type, status, error, retryAfter) => {
    const response = Object.values(resourcesOfType(api(), 'AWS::ApiGateway::GatewayResponse')).find(
      (r) => r.Properties.ResponseType === type,
    );
    expect(response?.Properties.StatusCode).toBe(status);
    const body = response?.Properties.ResponseTemplates['application/json'] as string;
    expect(body).toContain(`"error":"${error}"`);
    expect(response?.Properties.ResponseParameters['gatewayresponse.header.Content-Type']).toBe("'application/json'");
    const header = response?.Properties.ResponseParameters['gatewayresponse.header.Retry-After'];
    if (retryAfter) expect(header).toMatch(/^'\d+'$/);
    else expect(header).toBeUndefined();
  });

  it('outputs the API URL and the usage plan id', () => {
    api().hasOutput('ApiUrl', { Value: Match.anyValue() });
    const [planId] = Object.keys(api().findResources('AWS::ApiGateway::UsagePlan'));
    api().hasOutput('UsagePlanId', { Value: ref(planId as string) });
  });
});

describe('cdk-nag and CDK annotations', () => {
  it.each(stageNames)('%s: no unacknowledged AwsSolutions finding', (name) => {
    expect(nagViolations(get(name).app)).toEqual([]);
  });

  it('the check is not vacuous: a bare bucket is reported', () => {
    const app = new App({ context: cdkJsonContext() });
    new Bucket(new Stack(new Stage(app, 'Probe'), 'Probe'), 'Bare');
    expect(nagViolations(app).join('\n')).toMatch(/AwsSolutions-S1 .*Probe\/Probe\/Bare/);
  });

  it.each(stageNames)('%s: every acknowledgment gives its reason', (name) => {
    const acks = acknowledgments(get(name).app);
    expect(acks.length).toBeGreaterThan(0);
    for (const ack of acks) {
      expect(ack.id).toMatch(/AwsSolutions-/);
      expect(ack.reason.length, `${ack.id} at ${ack.path}`).toBeGreaterThan(30);
    }
  });

  it.each(stageNames)('%s: every acknowledgment covers a finding on its own construct (none is broader than needed)', (name) => {
    const findings = nagFindingsIgnoringAcknowledgments(get(name).app);
    for (const ack of acknowledgments(get(name).app)) {
      const rule = ack.id.replace(/^[^:[]+::/, ''); // drop the plugin namespace (`AwsSolutions::`)
      const covered = findings.filter((f) => f.startsWith(`${rule}@${ack.path}/`) || f === `${rule}@${ack.path}`);
      expect(covered.length, `${rule} acknowledged at ${ack.path} covers nothing`).toBeGreaterThan(0);
      // Scoped narrowly: the acknowledged construct is the resource itself or its direct owner, never a stack.
      expect(ack.path.split('/').length, ack.path).toBeGreaterThan(2);
    }
  });

  it.each(stageNames)('%s: no CDK warnings or errors on any stack', (name) => {
    const { stage } = get(name);
    for (const stack of [stage.data, stage.pipeline, stage.api]) {
      const annotations = Annotations.fromStack(stack);
      expect(annotations.findError('*', Match.anyValue()), stack.stackName).toEqual([]);
      expect(annotations.findWarning('*', Match.anyValue()), stack.stackName).toEqual([]);
    }
  });

  it('a route served by a function without declared access fails the synth', () => {
    const app = new App({ context: cdkJsonContext() });
    const route = { ...routes[0]!, lambda: 'feedback/undeclared' };
    expect(() => new FlywheelStage(app, 'Flywheel-dev', { settings: STAGES.dev, routes: [route] })).toThrow(
      /No access is declared for API function "feedback\/undeclared"/,
    );
  });

  it('the local stage is not deployable', async () => {
    const { addFlywheelStage } = await import('../../lib/stacks/flywheel-stage.ts');
    expect(() => addFlywheelStage(new App(), 'local', routes)).toThrow(/laptop/);
    expect(() => addFlywheelStage(new App(), 'staging', routes)).toThrow(/Unknown stage "staging"/);
  });
});

describe('cfn-lint', () => {
  it.each(stageNames)('%s: passes over every synthesized template', async (name) => {
    const { templatePaths } = get(name);
    expect(templatePaths).toHaveLength(5); // Data, Pipeline, Api, Compute, Workflows
    // cfn-lint exits non-zero on any error or warning and prints them: the assertion shows its output.
    const result = await run('cfn-lint', ['--format', 'parseable', ...templatePaths]).then(
      (r) => ({ code: 0, out: r.stdout + r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
    );
    expect(result).toEqual({ code: 0, out: '' });
  }, 60_000);
});

