/**
 * The few Slack Web API methods Flywheel calls, as a bot (`FLYWHEEL_SLACK_BOT_TOKEN`): post and update a message, and
 * upload a file into a thread (the `files.getUploadURLExternal` → upload → `files.completeUploadExternal` flow that
 * replaced `files.upload`). Bodies are form-encoded, which every method accepts; `blocks` go as JSON text.
 *
 * A reply with `ok: false` throws `SlackApiError` naming the method and Slack's error code (`channel_not_found`,
 * `not_in_channel`, `invalid_auth`, …); 429 and 5xx are retried twice, honouring `Retry-After`.
 *
 * @example
 * const slack = slackWebApiFromEnv();
 * if (slack) await slack.postMessage({ channel: 'C123', text: 'Sweep finished', threadTs: '1712.0001' });
 */
export const SLACK_BOT_TOKEN_ENV = 'FLYWHEEL_SLACK_BOT_TOKEN';
/** Where the Web API lives; tests point it at the fake Slack server. */
export const SLACK_API_URL_ENV = 'FLYWHEEL_SLACK_API_URL';
/** The channel notices and answers go to. */
export const SLACK_CHANNEL_ENV = 'FLYWHEEL_SLACK_CHANNEL';
export const SLACK_API_DEFAULT_URL = 'https://slack.com/api';

export const SlackErrorNames = { api: 'SlackApiError' } as const;

export class SlackApiError extends Error {
  override readonly name = SlackErrorNames.api;
  readonly method: string;
  /** Slack's error code, e.g. `channel_not_found`. */
  readonly code: string;
  constructor(method: string, code: string) {
    super(`Slack ${method} failed: ${code}`);
    this.method = method;
    this.code = code;
  }
}

export interface SlackWebApiOptions {
  token: string;
  /** Default https://slack.com/api. */
  baseUrl?: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

export interface SlackMessage {
  channel: string;
  text: string;
  blocks?: unknown[];
  threadTs?: string;
}

export interface SlackPosted {
  channel: string;
  ts: string;
}

const RETRY_PAUSES_MS = [500, 1500];

export class SlackWebApi {
  private readonly baseUrl: string;
  private readonly doFetch: typeof fetch;
  private readonly options: SlackWebApiOptions;

  constructor(options: SlackWebApiOptions) {
    this.options = options;
    this.baseUrl = (options.baseUrl ?? SLACK_API_DEFAULT_URL).replace(/\/+$/, '');
    this.doFetch = options.fetch ?? fetch;
  }

  /** `chat.postMessage`; in a thread when `threadTs` is given. */
  async postMessage(message: SlackMessage): Promise<SlackPosted> {
    const reply = await this.call('chat.postMessage', {
      channel: message.channel,
      text: message.text,
      ...(message.blocks ? { blocks: JSON.stringify(message.blocks) } : {}),
      ...(message.threadTs ? { thread_ts: message.threadTs } : {}),
    });
    return { channel: String(reply.channel), ts: String(reply.ts) };
  }

  /** `chat.update`: replaces a message's text and blocks (a decision answered: the buttons go). */
  async update(message: { channel: string; ts: string; text: string; blocks?: unknown[] }): Promise<void> {
    await this.call('chat.update', {
      channel: message.channel,
      ts: message.ts,
      text: message.text,
      blocks: JSON.stringify(message.blocks ?? []),
    });
  }

  /** Uploads bytes as a file shared into `channel` (and `threadTs`); resolves with the file id. */
  async uploadFile(file: { channel: string; threadTs?: string; filename: string; bytes: Uint8Array; title?: string; comment?: string }): Promise<string> {
    const target = await this.call('files.getUploadURLExternal', { filename: file.filename, length: String(file.bytes.length) });
    const uploadUrl = String(target.upload_url);
    const fileId = String(target.file_id);
    const res = await this.doFetch(uploadUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: file.bytes,
      signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
    });
    if (!res.ok) throw new SlackApiError('files.upload', `http_${res.status}`);
    await this.call('files.completeUploadExternal', {
      files: JSON.stringify([{ id: fileId, title: file.title ?? file.filename }]),
      channel_id: file.channel,
      ...(file.threadTs ? { thread_ts: file.threadTs } : {}),
      ...(file.comment ? { initial_comment: file.comment } : {}),
    });
    return fileId;
  }

  /** One Web API call, form-encoded with the bot token; retried on 429 and 5xx. */
  async call(method: string, args: Record<string, string>): Promise<Record<string, unknown>> {
    let lastCode = 'unknown';
    for (let attempt = 0; attempt <= RETRY_PAUSES_MS.length; attempt++) {
      const res = await this.doFetch(`${this.baseUrl}/${method}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.options.token}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(args).toString(),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
      });
      if (res.status === 429 || res.status >= 500) {
        lastCode = res.status === 429 ? 'ratelimited' : `http_${res.status}`;
        const pause = Number(res.headers.get('retry-after')) * 1000 || RETRY_PAUSES_MS[attempt] || 0;
        if (attempt < RETRY_PAUSES_MS.length) await new Promise((r) => setTimeout(r, Math.min(pause, 5_000)));
        continue;
      }
      const reply = (await res.json().catch(() => ({ ok: false, error: `http_${res.status}` }))) as Record<string, unknown>;
      if (reply.ok !== true) throw new SlackApiError(method, String(reply.error ?? 'unknown'));
      return reply;
    }
    throw new SlackApiError(method, lastCode);
  }
}

/** The bot client when `FLYWHEEL_SLACK_BOT_TOKEN` is set (with `FLYWHEEL_SLACK_API_URL` for a stand-in), else undefined. */
export function slackWebApiFromEnv(env: NodeJS.ProcessEnv = process.env): SlackWebApi | undefined {
  const token = env[SLACK_BOT_TOKEN_ENV];
  if (!token) return undefined;
  return new SlackWebApi({ token, ...(env[SLACK_API_URL_ENV] ? { baseUrl: env[SLACK_API_URL_ENV] } : {}) });
}
