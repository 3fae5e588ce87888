/**
 * The notices schedule's second job: deliver the notices that waited out quiet hours. Each is claimed with a
 * conditional write before it goes out, so two runs of the schedule at once deliver it once.
 */
import { deliverAndRecord, type RaiseNoticePorts } from './raise-notice.ts';
import type { NoticeDeliveryOptions } from './deliver-notice.ts';
import { noticeRecord, type StoredNotice } from './record-codecs.ts';
import { noticeKeys } from './record-keys.ts';

/**
 * @example
 * const { delivered } = await deliverDeferredNotices(ports, noticeDeliveryOptionsFromEnv());
 */
export async function deliverDeferredNotices(ports: RaiseNoticePorts, options: NoticeDeliveryOptions): Promise<{ delivered: string[] }> {
  const now = (ports.now?.() ?? new Date()).toISOString();
  const delivered: string[] = [];
  for (const status of ['open', 'acknowledged'] as const) {
    let cursor: string | undefined;
    do {
      const page = await ports.records.query({ index: 'gsi2', partition: noticeKeys.byStatus(status), limit: 500, ...(cursor ? { cursor } : {}) });
      for (const item of page.items) {
        const notice = noticeRecord.decode(item);
        if (notice.delivery.slack !== 'deferred' || (notice.delivery.deferredUntil ?? '') > now) continue;
        // Claim it: a notice no longer deferred is this run's to send, and no other run's.
        const claimed: StoredNotice = { ...notice, delivery: { slack: 'not-configured', topic: 'not-configured' }, revision: notice.revision + 1 };
        const { written } = await ports.records.put(noticeRecord.encode(claimed), { condition: { kind: 'unchanged', field: 'revision', value: notice.revision } });
        if (!written) continue;
        const { revision: _revision, ...publicClaimed } = claimed;
        await deliverAndRecord(ports, publicClaimed, options);
        delivered.push(notice.noticeId);
      }
      cursor = page.cursor;
    } while (cursor);
  }
  return { delivered };
}
