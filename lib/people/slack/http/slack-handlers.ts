/**
 * The Slack app's endpoints, open routes (no API key): Slack signs every request, and nothing unsigned is accepted.
 *
 * - `POST /v1/slack/commands` (a slash command, form-encoded): verified, validated and parsed at once; `help` and a
 *   command that is not one are answered right here with the usage (ephemeral), a command the user may not run with
 *   the reason; any other is acknowledged ("Working on it", ephemeral) and handed to the worker as a
 *   `people.slack.work` event, since Slack wants an answer within 3 seconds.
 * - `POST /v1/slack/interactions` (form-encoded `payload=` JSON): a `block_actions` click on a notice's button
 *   (`action_id` `notice:<actionId>`) is handed to the worker; the answer is an empty 200 at once.
 *
 * The body is read raw (`event.body`, base64-decoded when `isBase64Encoded`): the signature covers its exact bytes.
 * No signing secret configured: 503 "Slack app not configured". A bad or missing signature, a timestamp more than five
 * minutes off: 401 naming what failed.
 *
 * @example
 * routes.push({ method: 'POST', path: '/v1/slack/commands', operationId: 'postSlackCommand', lambda: 'people/slack', apiKeyRequired: false, scope: 'read', make: makeSlackCommandsHandler });
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { z } from 'zod';
import { httpApi, type HttpApiHandler } from '../../../api/http-api.ts';
import type { HttpResult } from '../../../api/json-response.ts';
import { ValidationError } from '../../../errors.ts';
import type { Ports } from '../../../ports/ports.ts';
import { parseInput } from '../../../shared/parse-input.ts';
import { NOTICE_ACTION_PREFIX } from '../../notices/notice-blocks.ts';
import { parseSlackCommand, SLACK_ADMIN_COMMANDS, SLACK_USAGE, type SlackCommand } from '../parse-command.ts';
import { mayAct, slackAdminsFromEnv } from '../slack-permissions.ts';
import { SLACK_WORK_EVENT, SlackTs, type SlackWork } from '../slack-work.ts';
import { SLACK_SIGNING_SECRET_ENV, SlackRequestErrorNames, verifySlackRequest } from '../verify-slack-request.ts';

/** Slack's requests are small: a slash command is a few hundred bytes, an interaction payload a few KB. */
export const SLACK_BODY_LIMIT = 64 * 1024;

export interface SlackEndpointOptions {
  /** The signing secret; undefined when none is configured (503). Default: `FLYWHEEL_SLACK_SIGNING_SECRET`, read per request. */
  signingSecret?: () => Promise<string | undefined>;
  /** The users who may act. Default: `FLYWHEEL_SLACK_ADMIN_USERS`. */
  admins?: () => ReadonlySet<string>;
  now?: () => Date;
}

const slackId = z.string().regex(/^[A-Z0-9]{2,32}$/, 'a Slack id (letters and digits)');

/** The fields of a slash command Flywheel reads (Slack sends more; they are ignored). */
export const SlackCommandForm = z.object({
  team_id: z.string().max(32).optional(),
  channel_id: slackId,
  user_id: slackId,
  user_name: z.string().max(128).optional(),
  command: z.string().min(1).max(64),
  text: z.string().max(4000).default(''),
  thread_ts: SlackTs.optional(),
});

/** The part of a `block_actions` payload Flywheel reads. */
export const SlackInteractionPayload = z.object({
  type: z.string().max(64),
  user: z.object({ id: slackId, username: z.string().max(128).optional() }),
  channel: z.object({ id: slackId }).optional(),
  container: z.object({ channel_id: slackId.optional(), message_ts: SlackTs.optional(), thread_ts: SlackTs.optional() }).optional(),
  message: z.object({ ts: SlackTs, thread_ts: SlackTs.optional() }).optional(),
  actions: z.array(z.object({ action_id: z.string().min(1).max(255), value: z.string().max(2000).optional() })).max(25).default([]),
});

const defaultSecret = () => Promise.resolve(process.env[SLACK_SIGNING_SECRET_ENV] || undefined);

/** The raw body as Slack sent it. */
function rawBodyOf(event: APIGatewayProxyEvent): string {
  const body = event.body ?? '';
  return event.isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body;
}

/** Verifies the request; a refusal as the response, or the raw body. */
async function checkSlackRequest(event: APIGatewayProxyEvent, options: SlackEndpointOptions): Promise<HttpResult | { rawBody: string }> {
  const secret = await (options.signingSecret ?? defaultSecret)();
  if (!secret) return { statusCode: 503, body: { error: SlackRequestErrorNames.notConfigured, message: 'Slack app not configured: no signing secret (FLYWHEEL_SLACK_SIGNING_SECRET, or the stage\'s notifications.slackApp)' } };
  const rawBody = rawBodyOf(event);
  if (Buffer.byteLength(rawBody) > SLACK_BODY_LIMIT) return { statusCode: 413, body: { error: 'Flywheel.PayloadTooLarge', message: `Request body over ${SLACK_BODY_LIMIT} bytes` } };
  const check = verifySlackRequest({ headers: event.headers, rawBody, signingSecret: secret, ...(options.now ? { now: options.now() } : {}) });
  if (!check.ok) return { statusCode: 401, body: { error: SlackRequestErrorNames.signature, message: check.reason, issues: [{ path: check.field, message: check.reason }] } };
  return { rawBody };
}

function formOf(rawBody: string): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(rawBody));
}

const ephemeral = (text: string): HttpResult => ({ statusCode: 200, body: { response_type: 'ephemeral', text } });

/**
 * `POST /v1/slack/commands`.
 *
 * @example
 * const handler = makeSlackCommandsHandler(ports, { signingSecret: async () => secret });
 */
export function makeSlackCommandsHandler(ports: Ports, options: SlackEndpointOptions = {}): HttpApiHandler {
  const admins = options.admins ?? (() => slackAdminsFromEnv());
  return httpApi(async (event) => {
    const checked = await checkSlackRequest(event, options);
    if (!('rawBody' in checked)) return checked;
    const form = parseInput(SlackCommandForm, formOf(checked.rawBody), 'slash command');
    let command: SlackCommand;
    try {
      command = parseSlackCommand(form.text);
    } catch (error) {
      if (error instanceof ValidationError) return ephemeral(error.message);
      throw error;
    }
    if (command.kind === 'help') return ephemeral(SLACK_USAGE);
    if (SLACK_ADMIN_COMMANDS.has(command.kind) && !mayAct(admins(), form.user_id)) {
      return ephemeral('Only the stage\'s Slack admins may start things from Slack (notifications.slackApp.adminUserIds); compare, status and help are open to everyone.');
    }
    const work: SlackWork = {
      kind: 'command',
      ...(form.team_id ? { teamId: form.team_id } : {}),
      channelId: form.channel_id,
      userId: form.user_id,
      ...(form.user_name ? { userName: form.user_name } : {}),
      command: form.command,
      text: form.text,
      ...(form.thread_ts ? { threadTs: form.thread_ts } : {}),
      receivedAt: (options.now?.() ?? new Date()).toISOString(),
    };
    await ports.events.publish([{ type: SLACK_WORK_EVENT, detail: work }]);
    return ephemeral(`Working on it: \`${form.command} ${form.text}\``.slice(0, 3000));
  });
}

/**
 * `POST /v1/slack/interactions`.
 *
 * @example
 * const handler = makeSlackInteractionsHandler(ports, { signingSecret: async () => secret });
 */
export function makeSlackInteractionsHandler(ports: Ports, options: SlackEndpointOptions = {}): (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult> {
  const handler = httpApi(async (event) => {
    const checked = await checkSlackRequest(event, options);
    if (!('rawBody' in checked)) return checked;
    const { payload } = parseInput(z.object({ payload: z.string().min(2) }), formOf(checked.rawBody), 'interaction');
    let json: unknown;
    try {
      json = JSON.parse(payload);
    } catch {
      throw new ValidationError('Invalid interaction: payload is not JSON', [{ path: 'payload', message: 'not JSON' }]);
    }
    const p = parseInput(SlackInteractionPayload, json, 'interaction payload');
    // Only button clicks on messages are answered; Slack sends other kinds (shortcuts, view submissions) to the same URL.
    if (p.type !== 'block_actions') return { statusCode: 200, body: '' };
    const channelId = p.channel?.id ?? p.container?.channel_id;
    const messageTs = p.message?.ts ?? p.container?.message_ts;
    const work: SlackWork[] = [];
    for (const action of p.actions) {
      if (!action.action_id.startsWith(NOTICE_ACTION_PREFIX)) continue; // the console link button needs nothing
      if (!channelId || !messageTs) throw new ValidationError('Invalid interaction payload: a button click without its channel and message', [{ path: channelId ? 'message.ts' : 'channel.id', message: 'required for a notice button' }]);
      if (!action.value) throw new ValidationError('Invalid interaction payload: a notice button without its notice id', [{ path: 'actions.value', message: 'required' }]);
      const threadTs = p.message?.thread_ts ?? p.container?.thread_ts;
      work.push({
        kind: 'interaction',
        channelId,
        userId: p.user.id,
        ...(p.user.username ? { userName: p.user.username } : {}),
        messageTs,
        ...(threadTs ? { threadTs } : {}),
        actionId: action.action_id,
        value: action.value,
        receivedAt: (options.now?.() ?? new Date()).toISOString(),
      });
    }
    if (work.length > 0) await ports.events.publish(work.map((detail) => ({ type: SLACK_WORK_EVENT, detail })));
    return { statusCode: 200, body: '' };
  });
  // Slack wants an empty 200 for a click; the refusals keep their JSON bodies.
  return async (event) => {
    const result = await handler(event);
    return result.statusCode === 200 ? { statusCode: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: '' } : result;
  };
}
