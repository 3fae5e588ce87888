/**
 * The Slack bot on AWS, with the stage's `notifications.slackApp` set: `people.slack.work` → a rule → SQS (+DLQ) →
 * the `people/slack-worker` function (batches of one, reporting failures), which reads the bot token secret and no
 * other, gets the admins and the channel in its environment and the sweep and training state machines from the
 * stack; the endpoint function reads the signing secret and publishes on the bus. cdk-nag finds nothing.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { describe, expect, it } from 'vitest';
import { STAGES, type StageSettings } from '../../lib/config/stages.ts';
import { ArtifactsBucket } from '../../lib/constructs/artifacts-bucket.ts';
import { FlywheelFunction } from '../../lib/constructs/flywheel-function.ts';
import { RecordsTable } from '../../lib/constructs/records-table.ts';
import { grantSlackEndpoints, SlackBot } from '../../lib/people/infra/slack-bot.ts';
import { cdkJsonContext, nagViolations } from '../infra/synth-flywheel.ts';

const settings: StageSettings = {
  ...STAGES.dev,
  notifications: { slackApp: { signingSecretName: 'flywheel/dev/slack-signing', botTokenSecretName: 'flywheel/dev/slack-bot', channelId: 'C0FLYWHEEL', adminUserIds: ['U0ADMIN', 'U0OTHER'] } },
};

describe('the Slack bot on AWS', () => {
  it('routes the work through a queue to the worker, with each secret read by the function that needs it', () => {
    const app = new App({ context: cdkJsonContext() });
    const stack = new Stack(app, 'SlackBotTest', { env: { account: '111111111111', region: 'eu-west-1' } });
    const bus = new EventBus(stack, 'Bus');
    const records = new RecordsTable(stack, 'Records', { retain: false, logicalId: 'RecordsTable' });
    const blobs = new ArtifactsBucket(stack, 'Blobs', { settings, logicalId: 'Blobs', accessLogsLogicalId: 'BlobsAccessLogs', arnExportName: 'slack-bot-test-blobs' });
    const alarmTopic = new Topic(stack, 'Alarms', { enforceSSL: true });
    const granted: string[] = [];
    new SlackBot(stack, 'SlackBot', { settings, bus, records, blobs, alarmTopic, environment: { FLYWHEEL_EVENT_BUS: 'bus' }, grantWorkflows: (fn) => void granted.push(fn.lambda) });
    const endpoints = new FlywheelFunction(stack, 'PeopleSlack', { lambda: 'people/slack', settings });
    grantSlackEndpoints(endpoints, { bus, settings });
    const t = Template.fromStack(stack);

    expect(granted).toEqual(['people/slack-worker']);
    t.hasResourceProperties('AWS::Events::Rule', { EventPattern: { source: ['flywheel'], 'detail-type': ['people.slack.work'] }, Targets: [Match.objectLike({ DeadLetterConfig: Match.anyValue() })] });
    t.hasResourceProperties('AWS::Lambda::EventSourceMapping', { BatchSize: 1, FunctionResponseTypes: ['ReportBatchItemFailures'] });
    t.hasResourceProperties('AWS::SQS::Queue', { RedrivePolicy: Match.objectLike({ maxReceiveCount: settings.maxReceiveCount }) });
    t.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('Slack bot worker'),
      Environment: { Variables: Match.objectLike({ FLYWHEEL_SLACK_ADMIN_USERS: 'U0ADMIN,U0OTHER', FLYWHEEL_SLACK_CHANNEL: 'C0FLYWHEEL', FLYWHEEL_SLACK_BOT_TOKEN_SECRET_NAME: 'flywheel/dev/slack-bot' }) },
    });
    t.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: Match.objectLike({ FLYWHEEL_SLACK_SIGNING_SECRET_NAME: 'flywheel/dev/slack-signing' }) } });

    // Each role reads its own secret only.
    const policies = Object.entries(t.findResources('AWS::IAM::Policy')).map(([id, p]) => [id, JSON.stringify(p)] as const);
    const worker = policies.find(([id]) => id.startsWith('SlackBotWorker'))![1];
    const endpoint = policies.find(([id]) => id.startsWith('PeopleSlack'))![1];
    expect(worker).toContain('secretsmanager:GetSecretValue');
    expect(worker).toContain('secret:flywheel/dev/slack-bot-??????');
    expect(worker).not.toContain('slack-signing');
    expect(endpoint).toContain('secret:flywheel/dev/slack-signing-??????');
    expect(endpoint).not.toContain('slack-bot');
    expect(endpoint).toContain('events:PutEvents');
    expect(endpoint).not.toContain('dynamodb:PutItem');
    expect(worker).toContain('dynamodb:PutItem');
    expect(worker).toContain('events:PutEvents');

    expect(nagViolations(stack).filter((v) => v.includes('SlackBot') || v.includes('PeopleSlack'))).toEqual([]);
  }, 60_000);
});
