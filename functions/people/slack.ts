/**
 * POST /v1/slack/commands, POST /v1/slack/interactions: the Slack app's endpoints (open routes; Slack signs every
 * request). The signing secret is the Secrets Manager secret FLYWHEEL_SLACK_SIGNING_SECRET_NAME names (the stage's
 * `notifications.slackApp.signingSecretName`), read once per cold start. The work goes to the bus as
 * `people.slack.work`, for the worker (functions/people/slack-worker.ts).
 */
import { makeDispatcher } from '../../lib/api/dispatch.ts';
import type { RouteSpec } from '../../lib/api/route.ts';
import { routesOf } from '../../lib/api/routes.ts';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { makeSlackCommandsHandler, makeSlackInteractionsHandler } from '../../lib/people/slack/http/slack-handlers.ts';
import { SLACK_SIGNING_SECRET_ENV, SLACK_SIGNING_SECRET_NAME_ENV } from '../../lib/people/slack/verify-slack-request.ts';
import { observability } from '../observability.ts';
import { secretOnce } from './slack-secrets.ts';

const obs = observability('people-slack');
const ports = { ...awsPortsFromEnv(), metrics: obs.metricsPort };
const signingSecret = secretOnce(process.env[SLACK_SIGNING_SECRET_NAME_ENV], process.env[SLACK_SIGNING_SECRET_ENV]);

const withSecret: Record<string, RouteSpec['make']> = {
  postSlackCommand: (p) => makeSlackCommandsHandler(p, { signingSecret }),
  postSlackInteraction: (p) => makeSlackInteractionsHandler(p, { signingSecret }),
};

export const handler = makeDispatcher(
  routesOf('people/slack').map((route) => ({ ...route, make: withSecret[route.operationId] ?? route.make })),
  ports,
).use(obs.middlewares);
