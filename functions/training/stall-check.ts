/**
 * The training stall check, invoked by its schedule (lib/training/infra/train-state-machine.ts): every running run
 * whose heartbeat (its metrics file) is older than its `stallMinutes` gets one notice to people (logged, and posted to
 * Slack when `FLYWHEEL_SLACK_WEBHOOK_URL` is set).
 */
import middy from '@middy/core';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { notifyOptionsFromEnv, notifyPeople, type Notice } from '../../lib/people/notify.ts';
import { checkStalledRuns } from '../../lib/training/runs/check-stalled-runs.ts';
import { observability } from '../observability.ts';

const obs = observability('training-stall-check');
const ports = { ...awsPortsFromEnv(), metrics: obs.metricsPort };
const notify = (notice: Notice) => notifyPeople(notice, notifyOptionsFromEnv());

export const handler = middy(async () => checkStalledRuns(ports, notify)).use(obs.middlewares);
