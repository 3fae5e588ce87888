/**
 * The Slack Block Kit message of a notice: a header, the text, the fields, a button that opens the console where a
 * person acts (`<console URL>#<link>`), and one button per action (`action_id` `notice:<actionId>`, `value` the
 * notice id: the interactions endpoint answers it). A resolved notice says who answered and what came of it, without
 * buttons; an acknowledged one says who saw it.
 */
import type { NoticeRecord } from './schemas.ts';

const SEVERITY_ICON: Record<NoticeRecord['severity'], string> = { info: ':information_source:', warning: ':warning:', alert: ':rotating_light:' };

/** The `action_id` prefix of a notice's buttons. */
export const NOTICE_ACTION_PREFIX = 'notice:';
/** The `action_id` of the link button (Slack sends an interaction for it too; it needs no answer). */
export const NOTICE_LINK_ACTION = 'notice-link';

/** The absolute console address of a notice's link (`https://console.example#/training/run-7`), or undefined. */
export function consoleLinkOf(link: string | undefined, consoleUrl: string | undefined): string | undefined {
  if (!link || !consoleUrl) return undefined;
  return `${consoleUrl.replace(/#.*$/, '').replace(/\/+$/, '')}/#${link.startsWith('/') ? link : `/${link}`}`;
}

/**
 * @example
 * const { text, blocks } = noticeBlocks(notice, process.env.FLYWHEEL_CONSOLE_URL);
 * await slack.postMessage({ channel, text, blocks });
 */
export function noticeBlocks(notice: NoticeRecord, consoleUrl?: string): { text: string; blocks: unknown[] } {
  const repeats = notice.occurrences > 1 ? ` (×${notice.occurrences})` : '';
  const text = `${SEVERITY_ICON[notice.severity]} ${notice.title}${repeats}`;
  const fields = Object.entries(notice.fields ?? {})
    .slice(0, 10)
    .map(([k, v]) => ({ type: 'mrkdwn', text: `*${k}*\n${String(v)}`.slice(0, 2000) }));
  const blocks: unknown[] = [
    { type: 'header', text: { type: 'plain_text', text: notice.title.slice(0, 150), emoji: true } },
    { type: 'section', text: { type: 'mrkdwn', text: (notice.text || notice.title).slice(0, 3000) } },
  ];
  if (fields.length > 0) blocks.push({ type: 'section', fields });
  const context = [`${notice.kind} · ${notice.severity} · ${notice.noticeId}`];
  if (notice.occurrences > 1) context.push(`seen ${notice.occurrences} times, last ${notice.lastSeenAt}`);
  if (notice.status === 'acknowledged' && notice.acknowledgedBy) context.push(`acknowledged by ${notice.acknowledgedBy}`);
  blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: context.join(' · ').slice(0, 3000) }] });
  const url = consoleLinkOf(notice.link, consoleUrl);
  if (notice.status === 'resolved') {
    const r = notice.resolution;
    const answered = r ? `${r.actionId ? `*${labelOf(notice, r.actionId)}*` : 'Resolved'} by ${r.by}: ${r.outcome}` : 'Resolved';
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: `:white_check_mark: ${answered}`.slice(0, 3000) } });
    if (url) blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `<${url}|Open in the console>` }] });
    return { text: `${text} (resolved)`, blocks };
  }
  const buttons: unknown[] = [];
  if (url) buttons.push({ type: 'button', action_id: NOTICE_LINK_ACTION, text: { type: 'plain_text', text: 'Open in the console' }, url });
  for (const action of notice.actions ?? []) {
    buttons.push({
      type: 'button',
      action_id: `${NOTICE_ACTION_PREFIX}${action.id}`,
      value: notice.noticeId,
      text: { type: 'plain_text', text: action.label },
      ...(action.style ? { style: action.style } : {}),
    });
  }
  if (buttons.length > 0) blocks.push({ type: 'actions', block_id: `notice:${notice.noticeId}`, elements: buttons });
  return { text, blocks };
}

function labelOf(notice: NoticeRecord, actionId: string): string {
  return notice.actions?.find((a) => a.id === actionId)?.label ?? actionId;
}
