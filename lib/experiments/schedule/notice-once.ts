/**
 * A notice and its event sent once per stable id: a marker record (`EXPERIMENT#<id>` / `NOTICE#<noticeId>`) written
 * after both went out, so a rerun of the schedule after a crash sends nothing twice, unless the crash fell between the
 * sending and the marker (then once more, with the same ids, which Slack readers and event consumers recognise).
 */
import { z } from 'zod';
import type { Notice } from '../../people/notify.ts';
import type { DomainEvent, EventsPort } from '../../ports/events.ts';
import type { RecordsPort } from '../../ports/records.ts';
import { defineRecordCodec } from '../../shared/record-codec.ts';
import type { Notify } from '../decisions/experiment-notices.ts';

/** Sort-key prefix of the markers beside the experiment item. */
export const NOTICE_SENT_PREFIX = 'NOTICE#';

export const noticeSentRecord = defineRecordCodec({
  kind: 'experiment notice sent',
  schema: z.object({ experimentId: z.string(), noticeId: z.string(), sentAt: z.iso.datetime({ offset: true }) }),
  keys: (n) => ({ pk: `EXPERIMENT#${n.experimentId}`, sk: `${NOTICE_SENT_PREFIX}${n.noticeId}` }),
});

/**
 * Publishes `event` and tells people `notice` (both under `notice.id`), unless a marker says it was done.
 *
 * @example
 * await sendOnce({ records, events, notify }, 'exp-1', { id: 'experiment.arm-stopped:exp-1:b', … }, { type: 'experiment.arm-stopped', … }, now);
 */
export async function sendOnce(
  ports: { records: RecordsPort; events: EventsPort; notify: Notify },
  experimentId: string,
  notice: Notice & { id: string },
  event: DomainEvent | undefined,
  now: Date,
): Promise<boolean> {
  const marker = { pk: `EXPERIMENT#${experimentId}`, sk: `${NOTICE_SENT_PREFIX}${notice.id}` };
  if (await ports.records.get(marker.pk, marker.sk)) return false;
  if (event) await ports.events.publish([{ ...event, id: notice.id }]);
  await ports.notify(notice);
  await ports.records.put(noticeSentRecord.encode({ experimentId, noticeId: notice.id, sentAt: now.toISOString() }));
  return true;
}
