/**
 * Experiments on AWS, from the synthesized app: the schedule function on an EventBridge Scheduler schedule (the
 * stage's expression), `experiment.proposed` and `failure-modes.labelled` each behind a rule → SQS (+DLQ, alarms) →
 * their consumer, no rule of its own for a stopped arm (its alert notice reaches the alarm topic through
 * `notice.raised`), the API functions `experiments/api` and `experiments/assign` with their grants (Athena workgroup,
 * lift charts, no archive writes; assign reads only), the registry API serving the incumbent, and cdk-nag with nothing
 * unacknowledged.
 */
import { rmSync } from 'node:fs';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../lib/api/routes.ts';
import { getStageSettings } from '../../lib/config/stages.ts';
import { nagViolations, synthFlywheel, type SynthesizedStage } from '../infra/synth-flywheel.ts';

let synth: SynthesizedStage;
let pipeline: Template;

beforeAll(() => {
  synth = synthFlywheel('dev');
  pipeline = synth.pipeline;
}, 180_000);
afterAll(() => rmSync(synth.outdir, { recursive: true, force: true }));

/** The policies of the resources whose logical id starts with `prefix`, as one JSON text. */
const policiesOf = (template: Template, prefix: string) => JSON.stringify(Object.entries(template.findResources('AWS::IAM::Policy')).filter(([id]) => id.startsWith(prefix)));

/** The resources (as JSON texts) of the statements allowing `action` in the policies of `prefix`. */
function resourcesAllowing(template: Template, prefix: string, action: string): string[] {
  const out: string[] = [];
  for (const [id, policy] of Object.entries(template.findResources('AWS::IAM::Policy'))) {
    if (!id.startsWith(prefix)) continue;
    const statements = (policy as { Properties: { PolicyDocument: { Statement: Array<{ Action: string | string[]; Effect: string; Resource: unknown }> } } }).Properties.PolicyDocument.Statement;
    for (const st of statements) if (st.Effect === 'Allow' && [st.Action].flat().includes(action)) out.push(...[st.Resource].flat().map((r) => JSON.stringify(r)));
  }
  return out;
}

describe('experiments infrastructure', () => {
  it('runs the schedule function on the stage expression, with Athena, the records and the lift charts', () => {
    const expression = getStageSettings('dev').experiments.schedule;
    pipeline.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: expression.expression,
      ScheduleExpressionTimezone: expression.timezone,
      State: 'ENABLED',
      Target: Match.objectLike({ RetryPolicy: Match.objectLike({ MaximumRetryAttempts: 0 }) }),
    });
    const policy = policiesOf(pipeline, 'ExperimentsSchedule');
    for (const action of ['athena:StartQueryExecution', 'athena:GetQueryResults', 'glue:GetTable', 'dynamodb:PutItem', 'events:PutEvents']) expect(policy).toContain(action);
    expect(policy).toContain('experiments/*');
    expect(policy).toContain('tenants/*/experiments/*');
    expect(policy).toContain('workgroup/flywheel-dev-archive');
  });

  it('sends experiment.proposed and failure-modes.labelled through queues with dead-letter queues to their consumers', () => {
    for (const type of ['experiment.proposed', 'failure-modes.labelled']) {
      pipeline.hasResourceProperties('AWS::Events::Rule', { EventPattern: { source: ['flywheel'], 'detail-type': [type] }, Targets: [Match.objectLike({ DeadLetterConfig: Match.anyValue() })] });
    }
    const handlers = Object.values(pipeline.findResources('AWS::Lambda::Function')).map((f) => JSON.stringify((f as { Properties: { Description?: string } }).Properties.Description));
    for (const lambda of ['experiments/proposals', 'experiments/failure-mode-metrics']) expect(handlers.some((d) => d.includes(lambda))).toBe(true);
    const mappings = Object.values(pipeline.findResources('AWS::Lambda::EventSourceMapping')).map((m) => JSON.stringify(m));
    expect(mappings.filter((m) => m.includes('ExperimentsProposals') || m.includes('ExperimentsFailureModeMetrics'))).toHaveLength(2);
    for (const m of mappings) expect(m).toContain('ReportBatchItemFailures');
    // The failure-mode rows go to raw/metrics/ and nowhere else; the proposals consumer writes records (and publishes its
    // notice), no blobs.
    const fm = policiesOf(pipeline, 'ExperimentsFailureModeMetrics');
    expect(fm).toContain('raw/metrics/*');
    expect(fm).not.toContain('s3:DeleteObject');
    expect(policiesOf(pipeline, 'ExperimentsProposals')).not.toContain('s3:PutObject');
    // Queue age and dead-letter alarms for both queues.
    const alarms = JSON.stringify(pipeline.findResources('AWS::CloudWatch::Alarm'));
    expect(alarms).toContain('Experiment proposals');
    expect(alarms).toContain('Failure-mode metrics');
  });

  it('tells people of a stopped arm once: by its alert notice (notice.raised), with no experiment.arm-stopped rule to the alarm topic', () => {
    const rules = Object.values(pipeline.findResources('AWS::Events::Rule')) as Array<{ Properties: { EventPattern: unknown } }>;
    expect(rules.filter((r) => JSON.stringify(r.Properties.EventPattern).includes('experiment.arm-stopped'))).toEqual([]);
    pipeline.hasResourceProperties('AWS::Events::Rule', { EventPattern: { source: ['flywheel'], 'detail-type': ['notice.raised'], detail: { severity: ['warning', 'alert'] } } });
  });

  it('grants the experiments API Athena and lift charts, the assignment function reads only, and the registry serves the incumbent', () => {
    const lambdas = new Set(routes.map((r) => r.lambda));
    expect(lambdas.has('experiments/api')).toBe(true);
    expect(routes.find((r) => r.operationId === 'getIncumbent')).toMatchObject({ lambda: 'registry/api', scope: 'read', path: '/v1/incumbent' });
    expect(routes.find((r) => r.operationId === 'decideExperiment')).toMatchObject({ lambda: 'experiments/api', scope: 'admin' });
    const api = policiesOf(synth.api, 'ExperimentsApi');
    for (const action of ['athena:StartQueryExecution', 'glue:GetTable', 'dynamodb:ConditionCheckItem', 'events:PutEvents']) expect(api).toContain(action);
    // It writes lift charts and query results, never the archive.
    const puts = resourcesAllowing(synth.api, 'ExperimentsApi', 's3:PutObject');
    expect(puts.some((r) => r.includes('tenants/*/experiments/*'))).toBe(true);
    expect(puts.some((r) => r.includes('raw/'))).toBe(false);
    const assign = policiesOf(synth.api, 'ExperimentsAssign');
    expect(assign).toContain('dynamodb:GetItem');
    expect(assign).not.toContain('dynamodb:PutItem');
    expect(assign).not.toContain('s3:');
  });

  it('leaves no cdk-nag finding unacknowledged', () => {
    expect(nagViolations(synth.stage.pipeline)).toEqual([]);
    expect(nagViolations(synth.stage.api)).toEqual([]);
  });
});
