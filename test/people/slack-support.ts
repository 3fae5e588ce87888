/**
 * The Slack bot's tests: the local runtime (`startLocalRuntime`, real HTTP) with its Slack settings pointing at a fake
 * Slack (`test/support/fake-slack.ts`), and signed requests to its two endpoints as Slack sends them.
 */
import { afterAll, beforeAll } from 'vitest';
import { startFakeSlack, signSlackRequest, type FakeSlack } from '../support/fake-slack.ts';
import { setEnvFor, useLocalRuntime, type StartedRuntime } from '../judges/support/http-runtime.ts';

export const SECRET = 'slack-signing-secret-for-tests';
export const CHANNEL = 'C0FLYWHEEL';
export const ADMIN = 'U0ADMIN';
export const READER = 'U0READER';

export interface SlackRuntime extends StartedRuntime {
  slack: FakeSlack;
  /** POSTs a slash command as Slack does (signed unless `headers` replaces the signature). */
  command(text: string, extra?: { user?: string; threadTs?: string; headers?: Record<string, string> }): Promise<{ status: number; body: Record<string, any> }>;
  /** POSTs a `block_actions` click on a notice's button. */
  click(input: { noticeId: string; actionId: string; messageTs: string; user?: string }): Promise<{ status: number; text: string }>;
}

export function useSlackRuntime(prefix: string): { start: () => Promise<SlackRuntime> } {
  const { start: startRuntime, cleanups } = useLocalRuntime(prefix);
  let slack: FakeSlack;
  beforeAll(async () => {
    slack = await startFakeSlack({ channels: [CHANNEL] });
  });
  afterAll(async () => slack.close());

  async function start(): Promise<SlackRuntime> {
    setEnvFor(cleanups, 'FLYWHEEL_SLACK_SIGNING_SECRET', SECRET);
    setEnvFor(cleanups, 'FLYWHEEL_SLACK_BOT_TOKEN', slack.token);
    setEnvFor(cleanups, 'FLYWHEEL_SLACK_API_URL', slack.apiUrl);
    setEnvFor(cleanups, 'FLYWHEEL_SLACK_CHANNEL', CHANNEL);
    setEnvFor(cleanups, 'FLYWHEEL_SLACK_ADMIN_USERS', `${ADMIN},U0OTHERADMIN`);
    setEnvFor(cleanups, 'FLYWHEEL_SCHEDULE', 'off');
    const rt = await startRuntime();
    const post = (path: string, body: string, headers: Record<string, string>) =>
      fetch(`${rt.runtime.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });
    return {
      ...rt,
      slack,
      async command(text, extra = {}) {
        const form = new URLSearchParams({
          token: 'deprecated-verification-token',
          team_id: 'T0TEAM',
          channel_id: CHANNEL,
          user_id: extra.user ?? ADMIN,
          user_name: 'ana',
          command: '/flywheel',
          text,
          response_url: 'https://hooks.slack.example/commands/1',
          ...(extra.threadTs ? { thread_ts: extra.threadTs } : {}),
        }).toString();
        const res = await post('/v1/slack/commands', form, extra.headers ?? signSlackRequest(SECRET, form));
        return { status: res.status, body: (await res.json()) as Record<string, any> };
      },
      async click(input) {
        const payload = {
          type: 'block_actions',
          user: { id: input.user ?? ADMIN, username: 'ana' },
          channel: { id: CHANNEL },
          container: { type: 'message', channel_id: CHANNEL, message_ts: input.messageTs },
          message: { ts: input.messageTs, text: 'a notice' },
          actions: [{ action_id: `notice:${input.actionId}`, value: input.noticeId, block_id: `notice:${input.noticeId}`, type: 'button' }],
          response_url: 'https://hooks.slack.example/actions/1',
        };
        const form = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
        const res = await post('/v1/slack/interactions', form, signSlackRequest(SECRET, form));
        return { status: res.status, text: await res.text() };
      },
    };
  }
  return { start };
}
