/**
 * The notices API (every route of `people/api` in the route table): list, read, acknowledge notices, and answer a
 * decision notice's action (the operation runs through `performDecision`; the bot's Slack message is updated when
 * FLYWHEEL_SLACK_BOT_TOKEN and FLYWHEEL_SLACK_CHANNEL are set).
 */
import { makeDispatcher } from '../../lib/api/dispatch.ts';
import { routesOf } from '../../lib/api/routes.ts';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { observability } from '../observability.ts';

const obs = observability('people-api');
const ports = { ...awsPortsFromEnv(), metrics: obs.metricsPort };

export const handler = makeDispatcher(routesOf('people/api'), ports).use(obs.middlewares);
