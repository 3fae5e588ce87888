/**
 * The Slack app's endpoints through the local runtime (real HTTP, no API key): requests signed as Slack signs them are
 * accepted; a bad signature, an old timestamp, a missing header are refused (401 naming what failed), and with no
 * signing secret configured nothing is (503). Usage answers at once; `/flywheel compare` posts a parent message and
 * one PNG per shared metric into its thread; `/flywheel status` posts the loop overview. The bot client retries a 429.
 */
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { makeSlackCommandsHandler } from '../../lib/people/slack/http/slack-handlers.ts';
import { SlackApiError, SlackWebApi } from '../../lib/people/slack/slack-web-api.ts';
import { createRun } from '../../lib/training/runs/run-store.ts';
import { TrainingRunInputSchema, trainingRunKeys, type TrainingRun } from '../../lib/training/schemas.ts';
import { signSlackRequest, startFakeSlack } from '../support/fake-slack.ts';
import { waitFor } from '../support/wait-for.ts';
import { ADMIN, CHANNEL, READER, SECRET, useSlackRuntime, type SlackRuntime } from './slack-support.ts';

const { start } = useSlackRuntime('flywheel-slack-endpoints-');
const T0 = Date.parse('2026-12-01T10:00:00Z');

async function seedRun(rt: SlackRuntime, runId: string, steps: number, lossScale: number, extra: Record<string, number> = {}): Promise<void> {
  const at = new Date(T0).toISOString();
  const run: TrainingRun = { runId, request: TrainingRunInputSchema.parse({ runId, base: 'tiny:0', dataset: { runs: ['eval-1'] }, trainer: { steps } }), status: 'succeeded', createdAt: at, updatedAt: at, step: steps - 1 };
  await createRun(rt.side, run);
  const lines = Array.from({ length: steps }, (_, step) => JSON.stringify({ step, at: new Date(T0 + step * 1000).toISOString(), loss: lossScale / (step + 1), tokens: 512, ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, v * step])) }));
  await rt.side.blobs.put(trainingRunKeys(runId).metrics, Buffer.from(`${lines.join('\n')}\n`));
}

describe('Slack request signatures', () => {
  it('accepts what Slack signed and refuses the rest, naming what failed', async () => {
    const rt = await start();
    const ok = await rt.command('help');
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ response_type: 'ephemeral' });
    expect(ok.body.text).toContain('/flywheel compare RUN_A RUN_B');

    const form = new URLSearchParams({ channel_id: CHANNEL, user_id: ADMIN, command: '/flywheel', text: 'status' }).toString();
    const bad = await rt.command('status', { headers: signSlackRequest('another-secret', form) });
    expect(bad.status).toBe(401);
    expect(bad.body.error).toBe('Flywheel.SlackSignatureInvalid');
    expect(bad.body.issues).toEqual([expect.objectContaining({ path: 'X-Slack-Signature' })]);

    const old = Math.floor(Date.now() / 1000) - 6 * 60;
    const stale = await rt.command('status', { headers: signSlackRequest(SECRET, form, old) });
    expect(stale.status).toBe(401);
    expect(stale.body.issues[0].path).toBe('X-Slack-Request-Timestamp');
    expect(stale.body.message).toMatch(/more than 5 minutes/);

    const { 'x-slack-request-timestamp': ts } = signSlackRequest(SECRET, form);
    const missing = await rt.command('status', { headers: { 'x-slack-request-timestamp': ts! } });
    expect(missing.status).toBe(401);
    expect(missing.body.message).toBe('X-Slack-Signature header missing');

    // The body is what is signed: the same signature over another text is refused.
    const signedForOther = signSlackRequest(SECRET, 'text=help');
    expect((await rt.command('status', { headers: signedForOther })).status).toBe(401);

    const click = await fetch(`${rt.runtime.url}/v1/slack/interactions`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'payload=%7B%7D' });
    expect(click.status).toBe(401);

    // No secret configured: nothing is accepted, even correctly signed.
    delete process.env.FLYWHEEL_SLACK_SIGNING_SECRET;
    const unconfigured = await rt.command('help');
    expect(unconfigured.status).toBe(503);
    expect(unconfigured.body).toMatchObject({ error: 'Flywheel.SlackAppNotConfigured', message: expect.stringContaining('Slack app not configured') });
    // Nothing of the refused requests reached the bot.
    expect(rt.slack.calls.filter((c) => c.method === 'chat.postMessage' && c.args.text?.includes('status'))).toEqual([]);
  });

  it('answers usage at once for an unknown command, and refuses an admin command to a reader', async () => {
    const rt = await start();
    const unknown = await rt.command('deploy everything');
    expect(unknown.status).toBe(200);
    expect(unknown.body.text).toContain('unknown command "deploy"');
    expect(unknown.body.text).toContain('/flywheel status');
    const missing = await rt.command('compare only-one');
    expect(missing.body.text).toContain('missing RUN_B');
    const reader = await rt.command('sweep smoke ckpt-a', { user: READER });
    expect(reader.body.text).toMatch(/Only the stage's Slack admins/);
    const malformed = await rt.command('status', { user: 'not a user id' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.issues).toEqual([expect.objectContaining({ path: 'user_id' })]);
  });
});

describe('the endpoint as Lambda sees it', () => {
  it('reads a base64-encoded body raw, and checks the signature over its bytes', async () => {
    const published: unknown[] = [];
    const ports = { events: { publish: async (events: unknown[]) => void published.push(...events) } } as unknown as Parameters<typeof makeSlackCommandsHandler>[0];
    const handler = makeSlackCommandsHandler(ports, { signingSecret: async () => SECRET, admins: () => new Set([ADMIN]) });
    const form = new URLSearchParams({ channel_id: CHANNEL, user_id: ADMIN, command: '/flywheel', text: 'compare run-a run-b' }).toString();
    const event = (body: string, headers: Record<string, string>) =>
      ({ httpMethod: 'POST', path: '/v1/slack/commands', resource: '/v1/slack/commands', headers, body: Buffer.from(body).toString('base64'), isBase64Encoded: true }) as unknown as Parameters<typeof handler>[0];
    const accepted = await handler(event(form, { 'X-Slack-Signature': signSlackRequest(SECRET, form)['x-slack-signature']!, 'X-Slack-Request-Timestamp': signSlackRequest(SECRET, form)['x-slack-request-timestamp']! }));
    expect(accepted.statusCode).toBe(200);
    expect(published).toEqual([{ type: 'people.slack.work', detail: expect.objectContaining({ kind: 'command', text: 'compare run-a run-b', userId: ADMIN }) }]);
    const tampered = await handler(event(`${form}x`, signSlackRequest(SECRET, form)));
    expect(tampered.statusCode).toBe(401);
    expect(published).toHaveLength(1);
  });
});

describe('/flywheel compare and status', () => {
  it('posts the comparison and one PNG chart per shared metric in its thread', async () => {
    const rt = await start();
    await seedRun(rt, 'run-a', 12, 3, { klSpans: 0.01 });
    await seedRun(rt, 'run-b', 8, 2);
    const ack = await rt.command('compare run-a run-b', { user: READER });
    expect(ack.status).toBe(200);
    expect(ack.body.text).toContain('Working on it');

    const parent = await waitFor(() => [...rt.slack.messages.values()].find((m) => m.text === 'Comparing run-a and run-b' && !m.threadTs), { what: 'the comparison message' });
    expect(parent.channel).toBe(CHANNEL);
    const summary = JSON.stringify(parent.blocks);
    expect(summary).toContain('status: succeeded');
    expect(summary).toContain('steps: 11 / 12');
    expect(summary).toContain('loss 0.25'); // run-b's last loss: 2 / 8
    // loss and tokens are shared; klSpans is run-a's only.
    const files = await waitFor(() => (rt.slack.filesIn(parent.ts).length === 2 ? rt.slack.filesIn(parent.ts) : undefined), { what: 'two charts in the thread' });
    expect(files.map((f) => f.title).sort()).toEqual(['loss: run-a vs run-b', 'tokens: run-a vs run-b']);
    for (const file of files) {
      expect(file.channel).toBe(CHANNEL);
      const png = PNG.sync.read(file.bytes);
      expect(png.width).toBeGreaterThanOrEqual(600);
      expect(png.height).toBeGreaterThanOrEqual(300);
      // A drawn chart, not a blank canvas: many distinct colours.
      const colours = new Set<number>();
      for (let i = 0; i < png.data.length; i += 4 * 7) colours.add(png.data.readUInt32BE(i));
      expect(colours.size).toBeGreaterThan(20);
    }

    // An unknown run is answered in the channel with the reason.
    await rt.command('compare run-a run-zzz');
    const refusal = await waitFor(() => [...rt.slack.messages.values()].find((m) => m.text.includes('run-zzz')), { what: 'the unknown run answered' });
    expect(refusal.text).toMatch(/:warning: .*run-zzz/);
  });

  it('posts the loop status as a Block Kit message', async () => {
    const rt = await start();
    await rt.call('POST', '/v1/checkpoints', { id: 'ckpt-a', model: 'coder-7b', serving: { kind: 'endpoint', model: 'openai:ckpt-a@http://127.0.0.1:1/v1' }, sweep: false });
    const ack = await rt.command('status', { user: READER });
    expect(ack.body.text).toContain('Working on it');
    const message = await waitFor(() => [...rt.slack.messages.values()].find((m) => m.text.startsWith('Flywheel status')), { what: 'the status message' });
    expect(message.blocks[0]).toMatchObject({ type: 'header', text: { text: 'Flywheel status' } });
    const text = JSON.stringify(message.blocks);
    expect(text).toContain('*Checkpoints*\\n1');
    expect(text).toContain('*Training runs*');
  });
});

describe('the bot client', () => {
  it('retries a 429 and then succeeds; a bad token is invalid_auth', async () => {
    const slack = await startFakeSlack({ channels: [CHANNEL] });
    try {
      slack.rateLimitNext('chat.postMessage', 2);
      const posted = await new SlackWebApi({ token: slack.token, baseUrl: slack.apiUrl }).postMessage({ channel: CHANNEL, text: 'hello' });
      expect(slack.calls.map((c) => c.status)).toEqual([429, 429, 200]);
      expect(slack.messages.get(posted.ts)?.text).toBe('hello');
      const wrong = new SlackWebApi({ token: 'wrong-bot-token', baseUrl: slack.apiUrl });
      await expect(wrong.postMessage({ channel: CHANNEL, text: 'x' })).rejects.toThrow(SlackApiError);
      await expect(wrong.postMessage({ channel: CHANNEL, text: 'x' })).rejects.toMatchObject({ code: 'invalid_auth' });
      await expect(new SlackWebApi({ token: slack.token, baseUrl: slack.apiUrl }).postMessage({ channel: 'CNOPE', text: 'x' })).rejects.toMatchObject({ code: 'channel_not_found' });
    } finally {
      await slack.close();
    }
  });
});
