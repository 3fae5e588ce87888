/**
 * A fake Slack: a real HTTP server speaking the Web API shapes Flywheel's bot client uses (`lib/people/slack/slack-web-api.ts`):
 * `chat.postMessage`, `chat.update`, `files.getUploadURLExternal` (an upload URL on this same server), the upload POST
 * itself, `files.completeUploadExternal`. Bodies are form-encoded as Slack takes them; the bearer token is checked
 * (`invalid_auth`), an unknown channel answers `channel_not_found`, an unknown message `message_not_found`; every call
 * is recorded for assertions. `rateLimitNext(method, n)` answers the next n calls of a method with 429 and
 * `Retry-After: 0`, as Slack throttles.
 *
 * `signSlackRequest` signs a request body as Slack does (v0 HMAC-SHA256 with a timestamp), for the app's endpoints.
 *
 * @example
 * const slack = await startFakeSlack({ channels: ['C0FLYWHEEL'] });
 * process.env.FLYWHEEL_SLACK_API_URL = slack.apiUrl; process.env.FLYWHEEL_SLACK_BOT_TOKEN = slack.token;
 * …
 * expect(slack.calls.filter((c) => c.method === 'chat.postMessage')).toHaveLength(1);
 * await slack.close();
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeSlackCall {
  method: string;
  args: Record<string, string>;
  /** The answer's `ok` (and `error` when not). */
  ok: boolean;
  error?: string;
  status: number;
}

export interface FakeSlackMessage {
  channel: string;
  ts: string;
  text: string;
  blocks: unknown[];
  threadTs?: string;
  /** How many times `chat.update` rewrote it. */
  updates: number;
}

export interface FakeSlackFile {
  id: string;
  filename: string;
  title?: string;
  bytes: Buffer;
  /** Set by `files.completeUploadExternal`. */
  channel?: string;
  threadTs?: string;
}

export interface FakeSlack {
  /** The Web API base (`FLYWHEEL_SLACK_API_URL`). */
  apiUrl: string;
  token: string;
  calls: FakeSlackCall[];
  /** Messages by ts (newest text and blocks after updates). */
  messages: Map<string, FakeSlackMessage>;
  files: Map<string, FakeSlackFile>;
  /** Messages of a thread (its parent excluded), oldest first. */
  thread(ts: string): FakeSlackMessage[];
  /** Files shared into a thread. */
  filesIn(threadTs: string): FakeSlackFile[];
  /** The next `count` calls of `method` answer 429 with `Retry-After: 0`. */
  rateLimitNext(method: string, count: number): void;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export async function startFakeSlack(options: { token?: string; channels?: string[] } = {}): Promise<FakeSlack> {
  const token = options.token ?? 'fake-bot-token';
  const channels = new Set(options.channels ?? ['C0FLYWHEEL']);
  const calls: FakeSlackCall[] = [];
  const messages = new Map<string, FakeSlackMessage>();
  const files = new Map<string, FakeSlackFile>();
  const throttled = new Map<string, number>();
  let seq = 0;
  const nextTs = () => `${1_765_000_000 + Math.floor(seq / 1000)}.${String(++seq).padStart(6, '0')}`;
  let base = '';

  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const url = new URL(req.url ?? '/', 'http://localhost');
      const answer = (status: number, reply: Record<string, unknown>, headers: Record<string, string> = {}) =>
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(JSON.stringify(reply));
      const upload = /^\/upload\/(F[A-Z0-9]+)$/.exec(url.pathname);
      if (upload && req.method === 'POST') {
        const file = files.get(upload[1]!);
        if (!file) return void res.writeHead(404).end('no such upload');
        file.bytes = body;
        return void res.writeHead(200, { 'content-type': 'text/plain' }).end(`OK - ${body.length}`);
      }
      const m = /^\/api\/([a-zA-Z.]+)$/.exec(url.pathname);
      if (!m || req.method !== 'POST') return void answer(404, { ok: false, error: 'unknown_method' });
      const method = m[1]!;
      const args = Object.fromEntries(new URLSearchParams(body.toString('utf8')));
      const record = (status: number, reply: Record<string, unknown>, headers?: Record<string, string>) => {
        calls.push({ method, args, ok: reply.ok === true, ...(typeof reply.error === 'string' ? { error: reply.error } : {}), status });
        answer(status, reply, headers);
      };
      const left = throttled.get(method) ?? 0;
      if (left > 0) {
        throttled.set(method, left - 1);
        return void record(429, { ok: false, error: 'ratelimited' }, { 'retry-after': '0' });
      }
      if (req.headers.authorization !== `Bearer ${token}`) return void record(200, { ok: false, error: 'invalid_auth' });
      if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) return void record(200, { ok: false, error: 'invalid_form_data' });
      const blocksOf = (text: string | undefined): unknown[] | undefined => {
        if (text === undefined) return [];
        try {
          const parsed = JSON.parse(text) as unknown;
          return Array.isArray(parsed) ? parsed : undefined;
        } catch {
          return undefined;
        }
      };
      switch (method) {
        case 'chat.postMessage': {
          if (!args.channel || !channels.has(args.channel)) return void record(200, { ok: false, error: 'channel_not_found' });
          if (!args.text && !args.blocks) return void record(200, { ok: false, error: 'no_text' });
          const blocks = blocksOf(args.blocks);
          if (!blocks) return void record(200, { ok: false, error: 'invalid_blocks' });
          if (args.thread_ts && !messages.has(args.thread_ts)) return void record(200, { ok: false, error: 'thread_not_found' });
          const ts = nextTs();
          messages.set(ts, { channel: args.channel, ts, text: args.text ?? '', blocks, ...(args.thread_ts ? { threadTs: args.thread_ts } : {}), updates: 0 });
          return void record(200, { ok: true, channel: args.channel, ts, message: { text: args.text, ts } });
        }
        case 'chat.update': {
          if (!args.channel || !channels.has(args.channel)) return void record(200, { ok: false, error: 'channel_not_found' });
          const message = args.ts ? messages.get(args.ts) : undefined;
          if (!message || message.channel !== args.channel) return void record(200, { ok: false, error: 'message_not_found' });
          const blocks = blocksOf(args.blocks);
          if (!blocks) return void record(200, { ok: false, error: 'invalid_blocks' });
          message.text = args.text ?? message.text;
          message.blocks = blocks;
          message.updates++;
          return void record(200, { ok: true, channel: args.channel, ts: message.ts, text: message.text });
        }
        case 'files.getUploadURLExternal': {
          const length = Number(args.length);
          if (!args.filename || !Number.isInteger(length) || length <= 0) return void record(200, { ok: false, error: 'invalid_arguments' });
          const id = `F${String(++seq).padStart(8, '0')}`;
          files.set(id, { id, filename: args.filename, bytes: Buffer.alloc(0) });
          return void record(200, { ok: true, upload_url: `${base}/upload/${id}`, file_id: id });
        }
        case 'files.completeUploadExternal': {
          let list: Array<{ id: string; title?: string }>;
          try {
            list = JSON.parse(args.files ?? '') as Array<{ id: string; title?: string }>;
          } catch {
            return void record(200, { ok: false, error: 'invalid_arguments' });
          }
          if (args.channel_id && !channels.has(args.channel_id)) return void record(200, { ok: false, error: 'channel_not_found' });
          if (args.thread_ts && !messages.has(args.thread_ts)) return void record(200, { ok: false, error: 'thread_not_found' });
          for (const f of list) {
            const file = files.get(f.id);
            if (!file || file.bytes.length === 0) return void record(200, { ok: false, error: 'file_not_found' });
            file.title = f.title;
            if (args.channel_id) file.channel = args.channel_id;
            if (args.thread_ts) file.threadTs = args.thread_ts;
          }
          return void record(200, { ok: true, files: list.map((f) => ({ id: f.id, title: f.title })) });
        }
        default:
          return void record(200, { ok: false, error: 'unknown_method' });
      }
    })().catch((error: unknown) => res.writeHead(500).end(String(error)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    apiUrl: `${base}/api`,
    token,
    calls,
    messages,
    files,
    thread: (ts) => [...messages.values()].filter((m) => m.threadTs === ts),
    filesIn: (threadTs) => [...files.values()].filter((f) => f.threadTs === threadTs),
    rateLimitNext: (method, count) => void throttled.set(method, count),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The headers Slack sends with `body`: `X-Slack-Request-Timestamp` (now, or `timestamp` seconds) and
 * `X-Slack-Signature` (`v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<body>`).
 *
 * @example
 * await fetch(`${url}/v1/slack/commands`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...signSlackRequest(secret, body) }, body });
 */
export function signSlackRequest(signingSecret: string, body: string, timestamp = Math.floor(Date.now() / 1000)): Record<string, string> {
  const ts = String(timestamp);
  return {
    'x-slack-request-timestamp': ts,
    'x-slack-signature': `v0=${createHmac('sha256', signingSecret).update(`v0:${ts}:${body}`).digest('hex')}`,
  };
}
