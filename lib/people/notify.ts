/**
 * Telling people: every notice is logged as one JSON line, and posted to a Slack incoming webhook when one is
 * configured (`FLYWHEEL_SLACK_WEBHOOK_URL`). This is the direct path a step uses for a decision someone has to take
 * (retire a saturated suite, look at a failed shard).
 *
 * On AWS the alarm topic (e-mail, and Slack through AWS Chatbot when the stage sets `notifications.slack`) carries a
 * shorter word of some of the same things, not these notices: rules on the Flywheel bus turn `suite.saturated` and a
 * `sweep.finished` that is not `succeeded` into a message (`lib/sweeps/infra/sweep-notices.ts`); a succeeded sweep,
 * even with regressions, reaches people only through this webhook. Executions that never reach a notice (failed, timed
 * out, stopped) raise CloudWatch alarms (`lib/sweeps/infra/sweep-execution-alarms.ts`), and jobs cancelled after too
 * long RUNNABLE are reported by `lib/compute/infra/runnable-timeout-report.ts`.
 *
 * A webhook that stays down never fails the caller: the notice is logged either way and `delivered` says whether
 * Slack took it (3 tries, 5 s timeout each, backing off 0.5 s then 1 s, on network errors, 429 and 5xx).
 */
export interface Notice {
  /** One line, e.g. `Suite forge-py is saturated (best strict 0.93)`. */
  title: string;
  /** Detail as Slack mrkdwn / plain text. */
  text: string;
  severity: 'info' | 'warning' | 'alert';
  /** Short key/value facts shown under the text. */
  fields?: Record<string, string | number>;
  /** Stable id, so a repeated notice can be recognised downstream (a resumed sweep). */
  id?: string;
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
  const doFetch = options.fetch ?? fetch;
  const body = JSON.stringify(slackMessage(notice));
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
      if (res.ok) return { logged: true, delivered: true, attempts: attempt };
      error = `HTTP ${res.status}`;
      if (res.status !== 429 && res.status < 500) break;
    } catch (e) {
      error = (e as Error).message;
    }
    const pause = RETRY_PAUSES_MS[attempt - 1];
    if (pause !== undefined) await new Promise((r) => setTimeout(r, pause));
  }
  log(JSON.stringify({ level: 'ERROR', message: 'notice not delivered to Slack', title: notice.title, error }));
  return { logged: true, delivered: false, attempts, error };
}

/** Options from the environment: `FLYWHEEL_SLACK_WEBHOOK_URL`. */
export function notifyOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): NotifyOptions {
  return env.FLYWHEEL_SLACK_WEBHOOK_URL ? { webhookUrl: env.FLYWHEEL_SLACK_WEBHOOK_URL } : {};
}
