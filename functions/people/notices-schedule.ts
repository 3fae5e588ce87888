/**
 * The notices schedule (EventBridge Scheduler, every 5 minutes): the stall check over every tenant's watched runs,
 * and the notices that waited out quiet hours delivered (Slack bot or webhook, `notice.raised` on the bus).
 */
import middy from '@middy/core';
import { getStageSettings } from '../../lib/config/stages.ts';
import { TransientError } from '../../lib/errors.ts';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { noticeDeliveryOptionsFromEnv } from '../../lib/people/notices/deliver-notice.ts';
import { runNoticesSchedule } from '../../lib/people/notices/run-notices-schedule.ts';
import { observability } from '../observability.ts';

const obs = observability('people-notices-schedule');
const ports = { ...awsPortsFromEnv(), metrics: obs.metricsPort };
const settings = getStageSettings(process.env.FLYWHEEL_STAGE || 'dev').notices;

export const handler = middy(async () => {
  const ticks = await runNoticesSchedule(ports, settings, noticeDeliveryOptionsFromEnv());
  const failed = ticks.filter((t) => t.error);
  for (const f of failed) obs.logger.error('notices schedule failed for a tenant', { tenant: f.tenant, error: f.error });
  // The others ran; the invocation still fails, so the function's error alarm tells people (the next tick tries again).
  if (failed.length > 0) throw new TransientError(`the notices schedule failed for ${failed.length} tenant(s); see the log`);
  return { tenants: ticks.length, stalled: ticks.flatMap((t) => t.stalled), delivered: ticks.reduce((n, t) => n + t.delivered.length, 0) };
}).use(obs.middlewares);
