/**
 * Judge prices reach the derivation on AWS: the stage's `judges.pricing` is set as FLYWHEEL_JUDGE_PRICING on the derive
 * step function and on judges/api (a synth of those two alone), and a derivation whose incumbent's model has no price
 * says so up front in its record, its report and its notice: a derived judge cannot be shown cheaper. A malformed
 * report blob is a named `Flywheel.MalformedRecord`, never a bare parse error.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { afterEach, describe, expect, it } from 'vitest';
import { STAGES, type JudgeModelPrice, type StageSettings } from '../../lib/config/stages.ts';
import { ArtifactsBucket } from '../../lib/constructs/artifacts-bucket.ts';
import { FlywheelFunction } from '../../lib/constructs/flywheel-function.ts';
import { RecordsTable } from '../../lib/constructs/records-table.ts';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { feedbackEventRecord } from '../../lib/feedback/record-codecs.ts';
import { labelAnnotation } from '../../lib/judges/annotation/annotation-queue.ts';
import { addToGoldSet, createGoldSet } from '../../lib/judges/annotation/gold-sets.ts';
import { DEFAULT_DERIVE_SETTINGS, defaultJudgeRunners, deriveSettingsFromEnv, JUDGE_PRICING_ENV, type DeriveSettings } from '../../lib/judges/derive/judge-runners.ts';
import { getDerivation } from '../../lib/judges/derive/read-derivations.ts';
import { derivationRecord } from '../../lib/judges/derive/record-codecs.ts';
import { derivationKeys } from '../../lib/judges/derive/record-keys.ts';
import { DeriveJudgesStateMachine } from '../../lib/judges/infra/derive-judges-state-machine.ts';
import { promoteJudge } from '../../lib/judges/registry/promote-judge.ts';
import { registerJudge } from '../../lib/judges/registry/register-judge.ts';
import { TRAINER_JOB_ATTEMPTS } from '../../lib/judges/workflow/derive-retry-policies.ts';
import { derivationIdOf, deriveSteps, type DeriveStepPorts } from '../../lib/judges/workflow/derive-steps.ts';
import type { Notice } from '../../lib/people/notify.ts';
import { registerCheckpoint } from '../../lib/registry/register-checkpoint.ts';
import { MALFORMED_RECORD } from '../../lib/shared/record-codec.ts';
import { API_FUNCTION_ACCESS } from '../../lib/stacks/api-stack.ts';
import type { DataStack } from '../../lib/stacks/data-stack.ts';
import { cdkJsonContext } from '../infra/synth-flywheel.ts';
import { tempDirs } from '../support/temp-dirs.ts';

const PRICES: JudgeModelPrice[] = [
  { prefix: 'bedrock:anthropic.', usdPerVerdict: 0.002 },
  { prefix: 'openai:coder-7b@', usdPerSecond: 0.0011 },
];

/** The derive step function, the trainer job definition and the judges/api function alone in a stack. */
function synthJudges(settings: StageSettings): Template {
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'JudgesOnly');
  const records = new RecordsTable(stack, 'Records', { retain: false, logicalId: 'Records' });
  const blobs = new ArtifactsBucket(stack, 'Blobs', { settings, logicalId: 'Blobs', accessLogsLogicalId: 'BlobsAccessLogs', arnExportName: 'test-blobs-arn' });
  const bus = new EventBus(stack, 'Bus');
  new DeriveJudgesStateMachine(stack, 'DeriveJudges', {
    settings,
    records,
    blobs,
    bus,
    alarmTopic: new Topic(stack, 'Alarms'),
    environment: { FLYWHEEL_TABLE: 'records' },
    cpuJobQueueArn: 'arn:aws:batch:eu-west-1:123456789012:job-queue/flywheel-dev-cpu',
    jobLogs: new LogGroup(stack, 'JobLogs'),
  });
  const api = new FlywheelFunction(stack, 'JudgesApi', { lambda: 'judges/api', settings, environment: { FLYWHEEL_TABLE: 'records' } });
  API_FUNCTION_ACCESS['judges/api']!(api, { records, blobs } as unknown as DataStack, { bus, settings });
  return Template.fromStack(stack);
}

/** FLYWHEEL_JUDGE_PRICING of each function, by its description's first words. */
function pricingByFunction(template: Template): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [id, fn] of Object.entries(template.findResources('AWS::Lambda::Function'))) {
    const props = fn['Properties'] as { Environment?: { Variables?: Record<string, string> } };
    out[id] = props.Environment?.Variables?.[JUDGE_PRICING_ENV];
  }
  return out;
}

describe('judge prices from the stage settings', () => {
  it('sets FLYWHEEL_JUDGE_PRICING on the derive step and judges/api, which read them back; none by default', () => {
    expect(STAGES.prod.judges.pricing).toEqual([]);
    const priced = pricingByFunction(synthJudges({ ...STAGES.dev, judges: { pricing: PRICES } }));
    const step = Object.entries(priced).find(([id]) => id.startsWith('DeriveJudgesStep'));
    const api = Object.entries(priced).find(([id]) => id.startsWith('JudgesApi'));
    expect(step?.[1]).toBeDefined();
    expect(api?.[1]).toBeDefined();
    for (const value of [step![1], api![1]]) expect(deriveSettingsFromEnv({ [JUDGE_PRICING_ENV]: value }).pricing).toEqual(PRICES);
    // The derivation trigger starts executions; it judges nothing.
    expect(Object.entries(priced).find(([id]) => id.startsWith('DeriveJudgesStart'))?.[1]).toBeUndefined();

    const template = synthJudges(STAGES.dev);
    expect(Object.values(pricingByFunction(template)).every((v) => v === undefined)).toBe(true);
    // One retry layer for the trainer: Batch's attempts (the ASL does not retry a failed job).
    const [def] = Object.values(template.findResources('AWS::Batch::JobDefinition'));
    expect((def!['Properties'] as { RetryStrategy: { Attempts: number } }).RetryStrategy.Attempts).toBe(TRAINER_JOB_ATTEMPTS);
  });
});

describe('a derivation whose incumbent has no price', () => {
  const tempDir = tempDirs('flywheel-derive-pricing-');
  let ports: LocalPorts | undefined;
  afterEach(() => {
    ports?.close();
    ports = undefined;
  });

  async function seed(p: LocalPorts): Promise<void> {
    await registerCheckpoint(p, { id: 'top-9', model: 'top', serving: { kind: 'endpoint', model: 'openai:coder-7b@http://127.0.0.1:9/v1' }, sweep: false });
    const { ref } = await registerJudge(p, { name: 'fm-judge', kind: 'failure-mode', model: 'bedrock:anthropic.claude-haiku', prompt: 'label failure modes' });
    await promoteJudge(p, ref, { by: 'test', force: true, reason: 'in service before gold sets' });
    await createGoldSet(p, { name: 'fm-gold', judge: 'fm-judge', labels: ['mode:scope'], twoPersonFraction: 0 });
    const at = new Date().toISOString();
    const subjects = [];
    for (let i = 0; i < 3; i++) {
      await p.records.put(
        feedbackEventRecord.encode({
          eventId: `g${i}`, feedbackKey: `t-g${i}:1:u`, kind: 'comment', traceId: `t-g${i}`, sessionId: 's', turnId: '1', model: 'coder', rating: 'down',
          comment: `comment ${i}`, source: 'user', reporter: 'u', trainingConsent: true, occurredAt: at, receivedAt: at, ingestId: 'test',
        }),
      );
      subjects.push({ kind: 'signal' as const, signalKey: `feedback:g${i}` });
    }
    const { items } = await addToGoldSet(p, 'fm-gold', { subjects });
    for (const item of items) await labelAnnotation(p, item.id, { annotator: 'ana', labels: { 'mode:scope': 'no' } });
  }

  function stepPorts(p: LocalPorts, settings: DeriveSettings, notices: Notice[]): DeriveStepPorts {
    return { ...p, settings, runners: defaultJudgeRunners(p, settings), notify: async (n) => notices.push(n) };
  }

  it('warns up front in the record, the report and the notice; a price for it lifts the warning', async () => {
    ports = openLocalPorts(tempDir());
    await seed(ports);
    const derivationId = derivationIdOf('top-9');
    const notices: Notice[] = [];
    const unpriced = stepPorts(ports, { ...DEFAULT_DERIVE_SETTINGS, pricing: [] }, notices);
    const plan = await deriveSteps['plan-derivation'](unpriced, { derivationId, checkpointId: 'top-9' });
    expect(plan.judges).toEqual([{ derivationId, name: 'fm-judge' }]);
    const key = derivationKeys.derivation(derivationId);
    const record = derivationRecord.decode((await ports.records.get(key.pk, key.sk))!);
    expect(record.warnings).toContainEqual({ name: 'fm-judge', message: 'no price for bedrock:anthropic.claude-haiku: a derived judge cannot be shown cheaper' });
    expect(record.warnings).toContainEqual({ name: 'top-9', message: 'no price for openai:coder-7b@http://127.0.0.1:9/v1: its prompted judges cannot be shown cheaper' });

    await deriveSteps['report-derivation'](unpriced, { derivationId });
    const { report } = await getDerivation(ports, { derivationId });
    expect(Object.keys(report!).indexOf('warnings')).toBeLessThan(Object.keys(report!).indexOf('judges'));
    expect(report!.warnings).toHaveLength(2);
    expect(notices[0]!.text.split('\n')[0]).toMatch(/^warning (fm-judge|top-9): no price for /);
    expect(notices[0]!.text).toContain('warning fm-judge: no price for bedrock:anthropic.claude-haiku: a derived judge cannot be shown cheaper');

    // With the stage's prices (as the step reads them from FLYWHEEL_JUDGE_PRICING) there is nothing to warn about.
    const priced = stepPorts(ports, deriveSettingsFromEnv({ [JUDGE_PRICING_ENV]: JSON.stringify(PRICES) }), notices);
    await deriveSteps['plan-derivation'](priced, { derivationId, checkpointId: 'top-9' });
    expect(derivationRecord.decode((await ports.records.get(key.pk, key.sk))!).warnings).toBeUndefined();
  });

  it('reads a malformed report blob as Flywheel.MalformedRecord naming the field, not a bare parse error', async () => {
    ports = openLocalPorts(tempDir());
    await seed(ports);
    const derivationId = derivationIdOf('top-9');
    const step = stepPorts(ports, DEFAULT_DERIVE_SETTINGS, []);
    await deriveSteps['plan-derivation'](step, { derivationId, checkpointId: 'top-9' });
    const { reportKey } = await deriveSteps['report-derivation'](step, { derivationId });
    const good = JSON.parse(Buffer.from((await ports.blobs.get(reportKey))!).toString('utf8')) as Record<string, unknown>;
    await ports.blobs.put(reportKey, JSON.stringify({ ...good, judges: 'none' }));
    await expect(getDerivation(ports, { derivationId })).rejects.toMatchObject({ name: `Flywheel.${MALFORMED_RECORD}`, field: 'judges', pk: reportKey });
    await ports.blobs.put(reportKey, '{"derivationId": ');
    await expect(getDerivation(ports, { derivationId })).rejects.toMatchObject({ name: `Flywheel.${MALFORMED_RECORD}`, field: '' });
  });
});
