/**
 * Where a notice goes once it is stored: one JSON log line always; Slack through the bot (`chat.postMessage` to
 * `FLYWHEEL_SLACK_CHANNEL`, the message remembered so an answer updates it in place) when a bot token is set, else
 * the incoming webhook (`FLYWHEEL_SLACK_WEBHOOK_URL`); and `notice.raised` on the Flywheel bus, which a rule sends to
 * the alarm topic on AWS (`OnNoticeRaised`, `lib/people/infra/notices.ts`). A Slack that is down never fails the raiser:
 * `delivery.slack` says `failed`.
 */
import { getStageSettings, type NoticeSettings } from '../../config/stages.ts';
import type { EventsPort } from '../../ports/events.ts';
import { postSlackWebhook } from '../notify.ts';
import { SLACK_CHANNEL_ENV, slackWebApiFromEnv, type SlackWebApi } from '../slack/slack-web-api.ts';
import { consoleLinkOf, noticeBlocks } from './notice-blocks.ts';
import type { QuietHours } from './quiet-hours.ts';
import type { NoticeRecord } from './schemas.ts';

/** Published on the Flywheel bus for every notice delivered (detail-type); id `notice.raised:<noticeId>`. */
export const NOTICE_RAISED = 'notice.raised';
/** The console's address, so a notice's link opens it (`<url>#<link>`). */
export const CONSOLE_URL_ENV = 'FLYWHEEL_CONSOLE_URL';

export interface NoticeDeliveryOptions {
  /** The Slack bot (`slackWebApiFromEnv()`); with `slackChannel`, preferred over the webhook. */
  slack?: SlackWebApi;
  slackChannel?: string;
  /** A Slack incoming webhook, used when no bot is configured. */
  webhookUrl?: string;
  /** Where the JSON line goes; default stderr. */
  log?: (line: string) => void;
  fetch?: typeof fetch;
  timeoutMs?: number;
  /** The console's address, for links (`FLYWHEEL_CONSOLE_URL`). */
  consoleUrl?: string;
  /** The stage's quiet hours: `info`/`warning` notices raised inside them wait. */
  quietHours?: QuietHours;
}

type Delivery = NoticeRecord['delivery'];

/**
 * The options of this process: the bot or the webhook, the console URL, the stage's quiet hours (`FLYWHEEL_STAGE`).
 *
 * @example
 * await raiseNotice(ports, input, noticeDeliveryOptionsFromEnv());
 */
export function noticeDeliveryOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): NoticeDeliveryOptions {
  const slack = slackWebApiFromEnv(env);
  const settings = noticeSettingsFromEnv(env);
  return {
    ...(slack && env[SLACK_CHANNEL_ENV] ? { slack, slackChannel: env[SLACK_CHANNEL_ENV] } : {}),
    ...(env.FLYWHEEL_SLACK_WEBHOOK_URL ? { webhookUrl: env.FLYWHEEL_SLACK_WEBHOOK_URL } : {}),
    ...(env[CONSOLE_URL_ENV] ? { consoleUrl: env[CONSOLE_URL_ENV] } : {}),
    ...(settings.quietHours ? { quietHours: settings.quietHours } : {}),
  };
}

/** The stage's notice settings (`FLYWHEEL_STAGE`, default `local`). */
export function noticeSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): NoticeSettings {
  return getStageSettings(env.FLYWHEEL_STAGE || 'local').notices;
}

/**
 * Writes the notice's JSON log line (every raise, delivered or not).
 *
 * @example
 * logNotice(notice, options);
 */
export function logNotice(notice: NoticeRecord, options: NoticeDeliveryOptions, extra: Record<string, unknown> = {}): void {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  log(
    JSON.stringify({
      level: notice.severity === 'info' ? 'INFO' : 'WARN',
      message: 'notice',
      noticeId: notice.noticeId,
      id: notice.dedupKey,
      kind: notice.kind,
      severity: notice.severity,
      title: notice.title,
      text: notice.text,
      ...(notice.fields ? { fields: notice.fields } : {}),
      ...(notice.link ? { link: consoleLinkOf(notice.link, options.consoleUrl) ?? notice.link } : {}),
      source: notice.source,
      occurrences: notice.occurrences,
      ...extra,
    }),
  );
}

/**
 * Sends a stored notice to Slack and to the bus; resolves with its delivery (never throws for a channel that is down).
 *
 * @example
 * const delivery = await deliverNotice({ events: ports.events }, notice, options);
 */
export async function deliverNotice(ports: { events?: EventsPort }, notice: NoticeRecord, options: NoticeDeliveryOptions): Promise<Delivery> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const message = noticeBlocks(notice, options.consoleUrl);
  let slack: Delivery['slack'] = 'not-configured';
  let slackMessage: Delivery['slackMessage'];
  if (options.slack && options.slackChannel) {
    try {
      slackMessage = await options.slack.postMessage({ channel: options.slackChannel, text: message.text, blocks: message.blocks });
      slack = 'sent';
    } catch (e) {
      slack = 'failed';
      log(JSON.stringify({ level: 'ERROR', message: 'notice not delivered to Slack', noticeId: notice.noticeId, title: notice.title, error: (e as Error).message }));
    }
  } else if (options.webhookUrl) {
    const posted = await postSlackWebhook(message, { ...options, webhookUrl: options.webhookUrl });
    slack = posted.delivered ? 'sent' : 'failed';
    if (!posted.delivered) log(JSON.stringify({ level: 'ERROR', message: 'notice not delivered to Slack', noticeId: notice.noticeId, title: notice.title, error: posted.error }));
  }
  let topic: Delivery['topic'] = 'not-configured';
  if (ports.events) {
    try {
      await ports.events.publish([
        {
          type: NOTICE_RAISED,
          id: `${NOTICE_RAISED}:${notice.noticeId}`,
          detail: {
            noticeId: notice.noticeId,
            dedupKey: notice.dedupKey,
            kind: notice.kind,
            severity: notice.severity,
            title: notice.title,
            text: notice.text.slice(0, 1000),
            ...(notice.link ? { link: consoleLinkOf(notice.link, options.consoleUrl) ?? notice.link } : {}),
          },
        },
      ]);
      topic = 'sent';
    } catch (e) {
      topic = 'failed';
      log(JSON.stringify({ level: 'ERROR', message: 'notice not published', noticeId: notice.noticeId, error: (e as Error).message }));
    }
  }
  return { slack, topic, ...(slackMessage ? { slackMessage } : {}) };
}

/**
 * Replaces a notice's Slack message with its current state (answered: who and what, no buttons). Only a notice the
 * bot posted has a message to update; a failure is logged, never thrown.
 *
 * @example
 * await updateNoticeMessage(resolved, noticeDeliveryOptionsFromEnv());
 */
export async function updateNoticeMessage(notice: NoticeRecord, options: NoticeDeliveryOptions): Promise<boolean> {
  const target = notice.delivery.slackMessage;
  if (!target || !options.slack) return false;
  const message = noticeBlocks(notice, options.consoleUrl);
  try {
    await options.slack.update({ channel: target.channel, ts: target.ts, text: message.text, blocks: message.blocks });
    return true;
  } catch (e) {
    const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
    log(JSON.stringify({ level: 'ERROR', message: 'notice message not updated', noticeId: notice.noticeId, error: (e as Error).message }));
    return false;
  }
}
