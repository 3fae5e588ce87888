/**
 * The notices on AWS, as synthesized: `notice.raised` (warnings and alerts) routed to the alarm topic with the
 * notice's title, text and link; the notices schedule every 5 minutes invoking `people/notices-schedule`, which may
 * write records and publish on the bus; the `people/api` function; no unacknowledged cdk-nag finding among them.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nagViolations, resourcesOfType, synthFlywheel, type SynthesizedStage } from '../infra/synth-flywheel.ts';

let dev: SynthesizedStage;
beforeAll(() => {
  dev = synthFlywheel('dev');
}, 120_000);
afterAll(() => rmSync(dev.outdir, { recursive: true, force: true }));

const policyOf = (template: SynthesizedStage['pipeline'], roleId: string) =>
  Object.values(resourcesOfType(template, 'AWS::IAM::Policy'))
    .filter((p) => JSON.stringify(p.Properties.Roles).includes(`"${roleId}"`))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[] }>)
    .flatMap((s) => [s.Action].flat());

describe('notices on AWS', () => {
  it('sends notice.raised warnings and alerts to the alarm topic, with the title, text and link', () => {
    const rules = Object.values(resourcesOfType(dev.pipeline, 'AWS::Events::Rule')).filter((r) => JSON.stringify(r.Properties.EventPattern).includes('notice.raised'));
    expect(rules).toHaveLength(1);
    const rule = rules[0]!.Properties;
    expect(rule.EventPattern).toMatchObject({ source: ['flywheel'], 'detail-type': ['notice.raised'], detail: { severity: ['warning', 'alert'] } });
    expect(rule.Targets).toHaveLength(1);
    expect(JSON.stringify(rule.Targets[0].Arn)).toContain('AlarmTopic');
    const template = rule.Targets[0].InputTransformer.InputTemplate as string;
    for (const path of ['$.detail.title', '$.detail.text', '$.detail.link', '$.detail.noticeId']) expect(JSON.stringify(rule.Targets[0].InputTransformer.InputPathsMap)).toContain(path);
    expect(template).toContain('flywheel notices show');
  });

  it('runs the notices schedule every 5 minutes; its function writes records and publishes on the bus', () => {
    const schedules = Object.values(resourcesOfType(dev.pipeline, 'AWS::Scheduler::Schedule')).filter((s) => String(s.Properties.Description).includes('quiet hours'));
    expect(schedules).toHaveLength(1);
    expect(schedules[0]!.Properties).toMatchObject({ ScheduleExpression: 'cron(0/5 * * * ? *)', ScheduleExpressionTimezone: 'UTC', State: 'ENABLED' });
    const fns = Object.entries(resourcesOfType(dev.pipeline, 'AWS::Lambda::Function')).filter(([, f]) => String(f.Properties.Description).includes('notices schedule'));
    expect(fns).toHaveLength(1);
    const roleId = (fns[0]![1].Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const actions = policyOf(dev.pipeline, roleId);
    expect(actions).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:Query', 'events:PutEvents']));
  });

  it('serves the notices API from people/api, and leaves no cdk-nag finding unacknowledged', () => {
    const api = Object.entries(resourcesOfType(dev.api, 'AWS::Lambda::Function')).filter(([, f]) => f.Properties.Description === 'Flywheel people/api (dev)');
    expect(api).toHaveLength(1);
    const roleId = (api[0]![1].Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    // Answering a decision runs its operation: records, the bus, the training executions.
    expect(policyOf(dev.api, roleId)).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'events:PutEvents', 'states:StartExecution']));
    expect(nagViolations(dev.stage).filter((v) => /Notices|PeopleApi/.test(v))).toEqual([]);
  });
});
