/**
 * The notices under `npm start`: the notices schedule (stall check, deferred deliveries) on the local schedule runner
 * every 5 minutes, as EventBridge Scheduler runs `people/notices-schedule` on AWS. FLYWHEEL_SCHEDULE=off turns it off.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { getStageSettings } from '../../../config/stages.ts';
import type { Ports } from '../../../ports/ports.ts';
import { startCronSchedule, type CronSchedule } from '../../../shared/cron-schedule.ts';
import { noticeDeliveryOptionsFromEnv, type NoticeDeliveryOptions } from '../deliver-notice.ts';
import { NOTICES_SCHEDULE, runNoticesSchedule, type NoticesTick } from '../run-notices-schedule.ts';

export interface LocalNotices {
  schedule?: CronSchedule;
  /** One tick now (tests). */
  tick(): Promise<NoticesTick[]>;
  close(): Promise<void>;
}

/**
 * @example
 * const notices = startLocalNotices(ports, { logger });
 * await notices.close();
 */
export function startLocalNotices(ports: Ports, options: { logger?: Logger; schedule?: boolean; delivery?: NoticeDeliveryOptions } = {}): LocalNotices {
  const settings = getStageSettings(process.env.FLYWHEEL_STAGE || 'local').notices;
  const delivery = options.delivery ?? noticeDeliveryOptionsFromEnv();
  let running: Promise<NoticesTick[]> | undefined;
  const tick = async (): Promise<NoticesTick[]> => {
    // One tick at a time: a slow Slack must not stack ticks up.
    running ??= runNoticesSchedule(ports, settings, delivery).finally(() => (running = undefined));
    const ticks = await running;
    for (const t of ticks) {
      if (t.error) options.logger?.error('notices schedule: a tenant failed', { tenant: t.tenant, error: t.error });
      else if (t.stalled.length > 0 || t.delivered.length > 0) options.logger?.info('notices schedule', { tenant: t.tenant, stalled: t.stalled, delivered: t.delivered });
    }
    return ticks;
  };
  const on = options.schedule ?? process.env.FLYWHEEL_SCHEDULE !== 'off';
  const schedule = on
    ? startCronSchedule(NOTICES_SCHEDULE, async () => void (await tick()), { path: 'notices.schedule', onError: (error) => options.logger?.error('notices schedule failed', { error: String(error) }) })
    : undefined;
  return {
    ...(schedule ? { schedule } : {}),
    tick,
    close: async () => {
      schedule?.stop();
      await running;
    },
  };
}
