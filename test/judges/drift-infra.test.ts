/**
 * The drift watch's infrastructure: the rule on the bus (judge.verdict) → SQS with a dead-letter queue → the
 * judges/drift-watch function with partial batch failures, its queue alarms, no rule of its own for a drift demotion
 * (its alert notice reaches the alarm topic through `notice.raised`), the judges/api function's access for calibration,
 * and cdk-nag with nothing unacknowledged.
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

describe('drift watch infrastructure', () => {
  it('routes judge.verdict from the bus to an SQS queue with a dead-letter queue, consumed with partial batch failures', () => {
    pipeline.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: { source: ['flywheel'], 'detail-type': ['judge.verdict'] },
      Targets: Match.arrayWith([Match.objectLike({ DeadLetterConfig: Match.anyValue(), RetryPolicy: Match.anyValue() })]),
    });
    pipeline.hasResourceProperties('AWS::SQS::Queue', { RedrivePolicy: Match.objectLike({ maxReceiveCount: 5 }), VisibilityTimeout: 180 });
    const functions = Object.values(pipeline.findResources('AWS::Lambda::Function', { Properties: { Timeout: 30, Description: Match.stringLikeRegexp('drift watch') } }));
    expect(functions).toHaveLength(1);
    const mappings = Object.values(pipeline.findResources('AWS::Lambda::EventSourceMapping')).map((m) => (m as { Properties: { FunctionResponseTypes?: string[] } }).Properties.FunctionResponseTypes);
    expect(mappings.every((t) => JSON.stringify(t) === JSON.stringify(['ReportBatchItemFailures']))).toBe(true);
    expect(mappings.length).toBeGreaterThanOrEqual(2);
  });

  it('alarms on the age of both of its queues and on its dead-letter depth', () => {
    const alarms = Object.values(pipeline.findResources('AWS::CloudWatch::Alarm')).map((a) => JSON.stringify(a));
    const drift = alarms.filter((a) => a.includes('DriftWatch'));
    expect(drift.filter((a) => a.includes('ApproximateAgeOfOldestMessage'))).toHaveLength(2);
    expect(drift.filter((a) => a.includes('ApproximateNumberOfMessagesVisible'))).toHaveLength(1);
  });

  it('tells people of a drift demotion once: by its alert notice (notice.raised), with no judge.demoted rule to the alarm topic', () => {
    const rules = Object.values(pipeline.findResources('AWS::Events::Rule')) as Array<{ Properties: { EventPattern: unknown } }>;
    expect(rules.filter((r) => JSON.stringify(r.Properties.EventPattern).includes('judge.demoted'))).toEqual([]);
    pipeline.hasResourceProperties('AWS::Events::Rule', { EventPattern: { source: ['flywheel'], 'detail-type': ['notice.raised'], detail: { severity: ['warning', 'alert'] } } });
  });

  it('serves the annotation routes from judges/api, which may read blobs and call exactly the judge model', () => {
    const paths = routes.filter((r) => r.lambda === 'judges/api').map((r) => `${r.method} ${r.path}`);
    expect(paths).toEqual(
      expect.arrayContaining([
        'GET /v1/annotations',
        'POST /v1/annotations',
        'POST /v1/annotations/{id}/labels',
        'POST /v1/gold-sets',
        'GET /v1/gold-sets/{name}',
        'POST /v1/judges/{name}/calibrate',
        'POST /v1/judges/{name}/drift-check',
      ]),
    );
    const policies = JSON.stringify(api.findResources('AWS::IAM::Policy'));
    expect(policies).toContain(`foundation-model/${MODEL_ID}`);
    expect(policies).not.toContain('foundation-model/*');
    api.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('judges/api|judges-api|judges'),
      Environment: { Variables: Match.objectLike({ FLYWHEEL_JUDGE_MODEL: `bedrock:${MODEL_ID}` }) },
    });
  });

  it('passes cdk-nag with nothing unacknowledged', () => {
    expect(nagViolations(app)).toEqual([]);
  });
});
