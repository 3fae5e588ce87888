/**
 * Judge-graded and behavioural tasks in sweeps: the sweep settings carry the judge's and the simulated user's models
 * (the stage's `sweeps.judgeModel` / `sweeps.userModel`, FLYWHEEL_JUDGE_MODEL / FLYWHEEL_USER_MODEL over them), the
 * planner writes them into every shard spec the rollout job reads, and on AWS the rollout job definition gets them as
 * environment (and InvokeModel on a Bedrock model they name), absent by default. The synth is of the rollout job alone.
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { afterEach, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../lib/api/openapi.ts';
import { routes } from '../../lib/api/routes.ts';
import { STAGES, type StageSettings } from '../../lib/config/stages.ts';
import { ArtifactsBucket } from '../../lib/constructs/artifacts-bucket.ts';
import { RecordsTable } from '../../lib/constructs/records-table.ts';
import { registerCheckpoint } from '../../lib/registry/register-checkpoint.ts';
import { registerSuite } from '../../lib/registry/register-suite.ts';
import { addRolloutJob } from '../../lib/rollout/infra/rollout-job.ts';
import { parseShardSpec as parseRolloutSpec } from '../../lib/rollout/shard-spec.ts';
import { readShardSpec } from '../../lib/sweeps/shard-spec.ts';
import { sweepSettingsFromEnv } from '../../lib/sweeps/sweep-settings.ts';
import { sweepStepHandlers } from '../../lib/sweeps/sweep-step-handlers.ts';
import { sampleTask } from '../sweeps/support/scripted-rollout.ts';
import { cdkJsonContext } from '../infra/synth-flywheel.ts';
import { openSweepFixture, type SweepFixture } from '../sweeps/support/sweep-fixture.ts';

const JUDGE = 'openai:judge-large@http://10.0.0.9:8000/v1';
const USER = 'bedrock:anthropic.claude-haiku-4-5-v1:0';

let fx: SweepFixture | undefined;
afterEach(() => {
  fx?.close();
  fx = undefined;
});

describe('sweep settings and the planned shard spec', () => {
  it('reads the judge and user models from the environment over the stage, absent by default', () => {
    expect(STAGES.dev.sweeps.judgeModel).toBeUndefined();
    expect(STAGES.prod.sweeps.userModel).toBeUndefined();
    const none = sweepSettingsFromEnv({ FLYWHEEL_STAGE: 'dev' });
    expect(none).not.toHaveProperty('judgeModel');
    expect(none).not.toHaveProperty('userModel');
    expect(sweepSettingsFromEnv({ FLYWHEEL_STAGE: 'local', FLYWHEEL_JUDGE_MODEL: ` ${JUDGE} `, FLYWHEEL_USER_MODEL: USER })).toMatchObject({ judgeModel: JUDGE, userModel: USER });
  });

  it('writes them into every shard spec, which the rollout job reads as its judgeModel and userModel', async () => {
    fx = openSweepFixture({ settings: { judgeModel: JUDGE, userModel: USER } });
    await registerCheckpoint(fx.ports, { id: 'coder:step-1', model: 'coder', serving: { kind: 'endpoint', model: 'openai:coder@http://10.0.0.5:8000/v1' }, sweep: false });
    await fx.ports.blobs.put('suites/beh/v1/b1.json', JSON.stringify({ ...sampleTask('beh', 'b1'), grading: { by: 'judge', minScore: 1 }, rubric: [{ criterion: 'asks first' }] }));
    await registerSuite(fx.ports, { id: 'beh', visibility: 'private', owner: 'evals', tasks: { kind: 'blobs', prefix: 'suites/beh/v1/' }, taskIds: ['b1'] });
    const steps = sweepStepHandlers({ settings: fx.settings });
    await steps['validate-sweep'](fx.ports, { sweepId: 'judged-1', trigger: 'manual', requestedAt: '2026-12-03T10:00:00Z', checkpoints: ['coder:step-1'], modes: ['strict'] });
    const plan = await steps['plan-shards'](fx.ports, { sweepId: 'judged-1' });
    expect(plan.shardCount).toBe(1);
    const ref = plan.shards[0]!;
    expect(await readShardSpec(fx.ports.blobs, ref.shardKey)).toMatchObject({ judgeModel: JUDGE, userModel: USER });
    const job = parseRolloutSpec(JSON.parse(new TextDecoder().decode((await fx.ports.blobs.get(ref.shardKey))!)), ref.shardKey);
    expect(job).toMatchObject({ judgeModel: JUDGE, userModel: USER });
  });

  it('leaves them out when the settings have none (the job falls back to its environment)', async () => {
    fx = openSweepFixture();
    const { checkpoints } = await fx.seed({ checkpoints: 1, suites: 1, tasks: 1 });
    const steps = sweepStepHandlers({ settings: fx.settings });
    await steps['validate-sweep'](fx.ports, { sweepId: 'plain-1', trigger: 'manual', requestedAt: '2026-12-03T10:00:00Z', checkpoints, modes: ['strict'] });
    const plan = await steps['plan-shards'](fx.ports, { sweepId: 'plain-1' });
    const spec = await readShardSpec(fx.ports.blobs, plan.shards[0]!.shardKey);
    expect(spec.judgeModel).toBeUndefined();
    expect(spec.userModel).toBeUndefined();
  });
});

/** The rollout job alone in a stack, under `settings`. */
function synthRollout(settings: StageSettings): Template {
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'RolloutOnly');
  const records = new RecordsTable(stack, 'Records', { retain: false, logicalId: 'Records' });
  const blobs = new ArtifactsBucket(stack, 'Blobs', { settings, logicalId: 'Blobs', accessLogsLogicalId: 'BlobsAccessLogs', arnExportName: 'test-blobs-arn' });
  addRolloutJob(stack, { settings, data: { blobs, records }, environment: { FLYWHEEL_TABLE: 'records' }, logGroup: new LogGroup(stack, 'Logs'), attemptTimeout: Duration.hours(1), attempts: 2 });
  return Template.fromStack(stack);
}

function jobEnvironment(template: Template): Record<string, string> {
  const defs = Object.values(template.findResources('AWS::Batch::JobDefinition'));
  expect(defs).toHaveLength(1);
  const env = (defs[0]!['Properties'] as { ContainerProperties: { Environment: { Name: string; Value: string }[] } }).ContainerProperties.Environment;
  return Object.fromEntries(env.map((e) => [e.Name, e.Value]));
}

function invokeModelResources(template: Template): unknown[] {
  return Object.values(template.findResources('AWS::IAM::Policy')).flatMap((p) =>
    ((p['Properties'] as { PolicyDocument: { Statement: { Action: string | string[]; Resource: unknown }[] } }).PolicyDocument.Statement)
      .filter((s) => [s.Action].flat().includes('bedrock:InvokeModel'))
      .flatMap((s) => [s.Resource].flat()),
  );
}

describe('the rollout job definition on AWS', () => {
  it('gets FLYWHEEL_JUDGE_MODEL and FLYWHEEL_USER_MODEL from the stage setting, and InvokeModel on the Bedrock one only', () => {
    const settings: StageSettings = { ...STAGES.dev, sweeps: { ...STAGES.dev.sweeps, judgeModel: JUDGE, userModel: USER } };
    const template = synthRollout(settings);
    expect(jobEnvironment(template)).toMatchObject({ FLYWHEEL_JUDGE_MODEL: JUDGE, FLYWHEEL_USER_MODEL: USER, FLYWHEEL_TABLE: 'records' });
    const resources = JSON.stringify(invokeModelResources(template));
    expect(resources).toContain('foundation-model/anthropic.claude-haiku-4-5-v1:0');
    expect(invokeModelResources(template)).toHaveLength(1);
  });

  it('has neither by default', () => {
    const template = synthRollout(STAGES.dev);
    const env = jobEnvironment(template);
    expect(env).not.toHaveProperty('FLYWHEEL_JUDGE_MODEL');
    expect(env).not.toHaveProperty('FLYWHEEL_USER_MODEL');
    expect(invokeModelResources(template)).toEqual([]);
  });
});

describe('the OpenAPI document', () => {
  it("documents the sweep report's judged cells", () => {
    const doc = buildOpenApiDocument(routes) as { components: { schemas: Record<string, { properties?: Record<string, any>; required?: string[] }> } };
    const report = doc.components.schemas['SweepReport']!;
    expect(report.properties!['judged']).toMatchObject({ type: 'array', items: { $ref: '#/components/schemas/JudgedCell' } });
    expect(report.required).not.toContain('judged');
    const cell = doc.components.schemas['JudgedCell']!;
    expect(Object.keys(cell.properties!)).toEqual(['checkpoint', 'suite', 'mode', 'judge']);
    expect(Object.keys(doc.components.schemas['JudgeSummary']!.properties!)).toEqual(['attempts', 'scoreSum', 'meanScore', 'criteria']);
  });
});
