/**
 * The Slack bot's worker: `people.slack.work` (EventBridge rule → SQS `people-slack`, with its dead-letter queue) →
 * the command or button click done and answered in Slack. The bot token is the Secrets Manager secret
 * FLYWHEEL_SLACK_BOT_TOKEN_SECRET_NAME names, read once per cold start; sweeps and training runs start through Step
 * Functions (FLYWHEEL_STATE_MACHINE_SWEEP, FLYWHEEL_STATE_MACHINE_TRAIN); admins are FLYWHEEL_SLACK_ADMIN_USERS.
 */
import middy from '@middy/core';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { StepFunctionsWorkflows } from '../../lib/drivers/aws/step-functions-workflows.ts';
import { ConfigurationError } from '../../lib/errors.ts';
import { makeSlackWorkerHandler } from '../../lib/people/slack/consumers/slack-worker-consumer.ts';
import { slackAdminsFromEnv } from '../../lib/people/slack/slack-permissions.ts';
import { SLACK_API_URL_ENV, SLACK_BOT_TOKEN_ENV, SlackWebApi } from '../../lib/people/slack/slack-web-api.ts';
import { SLACK_BOT_TOKEN_SECRET_NAME_ENV } from '../../lib/people/slack/verify-slack-request.ts';
import { sweepSettingsFromEnv } from '../../lib/sweeps/sweep-settings.ts';
import { observability } from '../observability.ts';
import { secretOnce } from './slack-secrets.ts';

const obs = observability('people-slack-worker');
const ports = { ...awsPortsFromEnv(), workflows: StepFunctionsWorkflows.fromEnv(), metrics: obs.metricsPort };
const botToken = secretOnce(process.env[SLACK_BOT_TOKEN_SECRET_NAME_ENV], process.env[SLACK_BOT_TOKEN_ENV]);
const admins = slackAdminsFromEnv();
const sweepSettings = sweepSettingsFromEnv();
const baseUrl = process.env[SLACK_API_URL_ENV];
const consoleUrl = process.env.FLYWHEEL_CONSOLE_URL;

export const handler = middy(
  makeSlackWorkerHandler(async () => {
    const token = await botToken();
    if (!token) throw new ConfigurationError(`No Slack bot token (${SLACK_BOT_TOKEN_SECRET_NAME_ENV}): the Slack work cannot be answered`);
    return { ports, slack: new SlackWebApi({ token, ...(baseUrl ? { baseUrl } : {}) }), admins, sweepSettings, ...(consoleUrl ? { consoleUrl } : {}) };
  }),
).use(obs.middlewares);
