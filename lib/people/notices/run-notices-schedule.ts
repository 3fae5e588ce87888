/**
 * One tick of the notices schedule (every 5 minutes: EventBridge Scheduler → `functions/people/notices-schedule.ts`
 * on AWS, the local runtime's timer under `npm start`), for every tenant: the stall check over the watched runs, then
 * the notices that waited out quiet hours are delivered.
 */
import { listApiKeys } from '../../auth/api-keys.ts';
import { DEFAULT_TENANT } from '../../auth/scopes.ts';
import { scopePortsToTenant } from '../../auth/tenant-ports.ts';
import type { NoticeSettings } from '../../config/stages.ts';
import type { Ports } from '../../ports/ports.ts';
import { checkStalledRuns } from '../heartbeats/check-stalled-runs.ts';
import { deliverDeferredNotices } from './deliver-deferred-notices.ts';
import type { NoticeDeliveryOptions } from './deliver-notice.ts';

/** The schedule of the notices tick (Scheduler's syntax). */
export const NOTICES_SCHEDULE = { expression: 'cron(0/5 * * * ? *)', timezone: 'UTC', enabled: true } as const;

export interface NoticesTick {
  tenant: string;
  stalled: string[];
  delivered: string[];
  error?: string;
}

/**
 * @example
 * const ticks = await runNoticesSchedule(ports, STAGES.dev.notices, noticeDeliveryOptionsFromEnv());
 */
export async function runNoticesSchedule(ports: Ports, settings: NoticeSettings, options: NoticeDeliveryOptions): Promise<NoticesTick[]> {
  const tenants = new Set([DEFAULT_TENANT]);
  for (const key of await listApiKeys(ports.records)) tenants.add(key.tenant);
  const ticks: NoticesTick[] = [];
  for (const tenant of [...tenants].sort()) {
    const scoped = scopePortsToTenant(ports, tenant);
    try {
      const { stalled } = await checkStalledRuns(scoped, settings, options);
      const { delivered } = await deliverDeferredNotices(scoped, options);
      ticks.push({ tenant, stalled, delivered });
    } catch (error) {
      ticks.push({ tenant, stalled: [], delivered: [], error: (error as Error).message });
    }
  }
  return ticks;
}
