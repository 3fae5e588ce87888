/**
 * The failure-mode infrastructure: the rule on the bus (feedback.stored, report.stored) → SQS with a dead-letter
 * queue → the classify function with partial batch failures, the query function's routes, Bedrock access only to the
 * models named, and cdk-nag's AwsSolutions pack with nothing unacknowledged.
 */
import { rmSync } from 'node:fs';
import type { App } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../lib/api/routes.ts';
import { nagViolations, synthFlywheel } from '../infra/synth-flywheel.ts';

const MODEL_ID = 'anthropic.claude-sonnet-4-5-v1:0';
let outdir: string;
let app: App;
let pipeline: Template;
let api: Template;

beforeAll(() => {
  ({ outdir, app, pipeline, api } = synthFlywheel('dev', { judgeModel: `bedrock:${MODEL_ID}` }));
}, 120_000);
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

describe('modes infrastructure', () => {
  it('routes feedback.stored and report.stored from the bus to an SQS queue with a dead-letter queue', () => {
    pipeline.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: { source: ['flywheel'], 'detail-type': ['feedback.stored', 'report.stored'] },
      Targets: Match.arrayWith([Match.objectLike({ DeadLetterConfig: Match.anyValue(), RetryPolicy: Match.anyValue() })]),
    });
    pipeline.hasResourceProperties('AWS::SQS::Queue', { RedrivePolicy: Match.objectLike({ maxReceiveCount: 5 }), VisibilityTimeout: 720 });
    pipeline.hasResourceProperties('AWS::Lambda::EventSourceMapping', { FunctionResponseTypes: ['ReportBatchItemFailures'], BatchSize: 10 });
    pipeline.hasResourceProperties('AWS::Lambda::Function', {
      Timeout: 120,
      Environment: { Variables: Match.objectLike({ FLYWHEEL_JUDGE_MODEL: `bedrock:${MODEL_ID}` }) },
    });
  });

  it('grants InvokeModel on exactly the Bedrock model named, to the classifier and the query function', () => {
    for (const t of [pipeline, api]) {
      const policies = JSON.stringify(t.findResources('AWS::IAM::Policy'));
      expect(policies).toContain('bedrock:InvokeModel');
      expect(policies).toContain(`foundation-model/${MODEL_ID}`);
      expect(policies).not.toContain('foundation-model/*');
    }
  });

  it('serves every failure-mode route from the modes/query function', () => {
    const modesRoutes = routes.filter((r) => r.lambda === 'modes/query').map((r) => `${r.method} ${r.path}`);
    expect(modesRoutes).toEqual(
      expect.arrayContaining(['GET /v1/failure-modes', 'GET /v1/failure-modes/{mode}/examples', 'GET /v1/review-queue', 'POST /v1/review-queue/{id}/label', 'GET /v1/clusters', 'POST /v1/eval-drafts/{id}/approve']),
    );
    // One function per route lambda, and the API key authorizer.
    api.resourceCountIs('AWS::Lambda::Function', new Set(routes.map((r) => r.lambda)).size + 1);
  });

  it('passes cdk-nag with nothing unacknowledged', () => {
    expect(nagViolations(app)).toEqual([]);
  });
});
