/**
 * The bridge for capabilities whose use cases take a `notify` function (tests capture the notices it is given): the
 * default `notify` raises the notice (`raiseNotice`), with the notice's stable `id` as its dedup key, so a rerun's
 * notice folds into the first instead of telling people twice.
 */
import type { Notice } from '../notify.ts';
import { raiseNotice, type NoticeDeliveryOptions, type RaiseNoticePorts, type RaiseNoticeResult } from './raise-notice.ts';
import { NOTICE_LIMITS, type RaiseNoticeInput } from './schemas.ts';

export type Notifier = (notice: Notice) => Promise<RaiseNoticeResult>;

/**
 * The notice to raise for a `Notice`: its `id` (else the capability and title) as the dedup key, `info` unless it says
 * its kind, the capability as its source.
 *
 * @example
 * noticeInputOf({ id: 'training.run.finished:r1:failed:0', kind: 'failure', severity: 'alert', title: 'Run r1 failed', text: 'OOM' }, 'training');
 */
export function noticeInputOf(notice: Notice, capability: string): RaiseNoticeInput {
  return {
    dedupKey: (notice.id ?? `${capability}:${notice.title}`).slice(0, 256),
    kind: notice.kind ?? 'info',
    severity: notice.severity,
    title: notice.title.slice(0, NOTICE_LIMITS.titleMaxChars),
    text: notice.text.slice(0, NOTICE_LIMITS.textMaxChars),
    source: notice.source ?? { capability },
    ...(notice.link ? { link: notice.link } : {}),
    ...(notice.fields ? { fields: Object.fromEntries(Object.entries(notice.fields).slice(0, NOTICE_LIMITS.fieldsMax)) } : {}),
    ...(notice.actions && notice.actions.length > 0 ? { actions: notice.actions } : {}),
  };
}

/**
 * @example
 * const notify = ports.notify ?? noticeNotifier(ports, 'training');
 * await notify({ id: 'training.run.stalled:r1', kind: 'stall', severity: 'warning', title: '…', text: '…', link: '/training/r1' });
 */
export function noticeNotifier(ports: RaiseNoticePorts, capability: string, options?: NoticeDeliveryOptions): Notifier {
  return (notice) => raiseNotice(ports, noticeInputOf(notice, capability), options);
}
