/**
 * The plain path of telling people, under the notices (`lib/people/notices/`): the `Notice` shape the capabilities'
 * injected `notify` functions take (tests capture it; the default raises it as a stored, deduplicated notice through
 * `noticeNotifier`), and the Slack incoming webhook (`FLYWHEEL_SLACK_WEBHOOK_URL`) that `deliverNotice` falls back to
 * when no bot token is set. `notifyPeople` (log line + webhook, nothing stored) is left for a caller without records.
 *
 * On AWS, `notice.raised` (warnings and alerts) reaches the alarm topic through `lib/people/infra/notices.ts`: the one
 * path there for whatever raises a notice (a saturated suite, a sweep with failed shards, a training run failed or
 * stalled, an arm stopped, a drift demotion). Rules of their own remain only for what raises none: `sweep.refused`
 * (`lib/sweeps/infra/sweep-notices.ts`) and jobs cancelled after too long RUNNABLE
 * (`lib/compute/infra/runnable-timeout-report.ts`); executions that never reach a notice (failed, timed out, stopped)
 * raise CloudWatch alarms (`lib/sweeps/infra/sweep-execution-alarms.ts`).
 *
 * A webhook that stays down never fails the caller: the notice is logged either way and `delivered` says whether
 * Slack took it (3 tries, 5 s timeout each, backing off 0.5 s then 1 s, on network errors, 429 and 5xx).
 */
import type { RaiseNoticeInput } from './notices/schemas.ts';

export interface Notice {
  /** One line, e.g. `Suite forge-py is saturated (best strict 0.93)`. */
  title: string;
  /** Detail as Slack mrkdwn / plain text. */
  text: string;
  severity: 'info' | 'warning' | 'alert';
  /** Short key/value facts shown under the text. */
  fields?: Record<string, string | number>;
  /** Stable id, so a repeated notice can be recognised downstream (a resumed sweep); the notice's dedup key. */
  id?: string;
  /** What it is about (`lib/people/notices/schemas.ts`); `info` when absent. */
  kind?: 'failure' | 'stall' | 'decision' | 'budget' | 'info';
  /** The console path where a person acts, e.g. `/training/run-7`. */
  link?: string;
  /** The run it is about. */
  source?: { capability: string; runKind?: string; runId?: string };
  /** The buttons of a decision (`NoticeAction` of `lib/people/notices/schemas.ts`). */
  actions?: RaiseNoticeInput['actions'];
}

export interface NotifyOptions {
  webhookUrl?: string;
  /** Where the JSON line goes; default stderr. */
  log?: (line: string) => void;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

export interface NotifyResult {
  logged: true;
  delivered: boolean;
  attempts: number;
  error?: string;
}

const RETRY_PAUSES_MS = [500, 1000];
const SEVERITY_ICON: Record<Notice['severity'], string> = { info: ':information_source:', warning: ':warning:', alert: ':rotating_light:' };

/** The Slack incoming-webhook body of a notice (text for notifications, blocks for the message). */
export function slackMessage(notice: Notice): Record<string, unknown> {
  const fields = Object.entries(notice.fields ?? {}).map(([k, v]) => ({ type: 'mrkdwn', text: `*${k}*\n${v}` }));
  return {
    text: `${SEVERITY_ICON[notice.severity]} ${notice.title}`,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: notice.title.slice(0, 150) } },
      { type: 'section', text: { type: 'mrkdwn', text: notice.text.slice(0, 3000) } },
      ...(fields.length > 0 ? [{ type: 'section', fields: fields.slice(0, 10) }] : []),
    ],
  };
}

/**
 * @example
 * await notifyPeople({ title: 'Sweep nightly-1 finished', text: '24/24 shards', severity: 'info' },
 *   { webhookUrl: process.env.FLYWHEEL_SLACK_WEBHOOK_URL });
 */
export async function notifyPeople(notice: Notice, options: NotifyOptions = {}): Promise<NotifyResult> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  log(JSON.stringify({ level: notice.severity === 'info' ? 'INFO' : 'WARN', message: 'notice', ...notice }));
  if (!options.webhookUrl) return { logged: true, delivered: false, attempts: 0 };
  const posted = await postSlackWebhook(slackMessage(notice), { ...options, webhookUrl: options.webhookUrl });
  if (!posted.delivered) log(JSON.stringify({ level: 'ERROR', message: 'notice not delivered to Slack', title: notice.title, error: posted.error }));
  return { logged: true, ...posted };
}

/**
 * Posts one message body to a Slack incoming webhook: 3 tries, 5 s timeout each, backing off 0.5 s then 1 s, on
 * network errors, 429 and 5xx. Never throws: `delivered` says whether Slack took it.
 *
 * @example
 * const { delivered } = await postSlackWebhook({ text: 'hello' }, { webhookUrl });
 */
export async function postSlackWebhook(
  message: Record<string, unknown>,
  options: NotifyOptions & { webhookUrl: string },
): Promise<{ delivered: boolean; attempts: number; error?: string }> {
  const doFetch = options.fetch ?? fetch;
  const body = JSON.stringify(message);
  let error = '';
  let attempts = 0;
  for (let attempt = 1; attempt <= RETRY_PAUSES_MS.length + 1; attempt++) {
    attempts = attempt;
    try {
      const res = await doFetch(options.webhookUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(options.timeoutMs ?? 5000),
      });
      await res.text();
      if (res.ok) return { delivered: true, attempts: attempt };
      error = `HTTP ${res.status}`;
      if (res.status !== 429 && res.status < 500) break;
    } catch (e) {
      error = (e as Error).message;
    }
    const pause = RETRY_PAUSES_MS[attempt - 1];
    if (pause !== undefined) await new Promise((r) => setTimeout(r, pause));
  }
  return { delivered: false, attempts, error };
}

/** Options from the environment: `FLYWHEEL_SLACK_WEBHOOK_URL`. */
export function notifyOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): NotifyOptions {
  return env.FLYWHEEL_SLACK_WEBHOOK_URL ? { webhookUrl: env.FLYWHEEL_SLACK_WEBHOOK_URL } : {};
}
