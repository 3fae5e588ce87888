/**
 * OpenAPI descriptions of the Slack app's open routes (merged into `OPERATIONS` of `lib/api/openapi.ts`): Slack posts
 * them form-encoded and signs them (`X-Slack-Signature`, `X-Slack-Request-Timestamp`); no API key.
 */
import { z } from 'zod';
import { errorDoc, type OperationDoc } from '../../../api/operation-docs.ts';
import { SLACK_BODY_LIMIT } from './slack-handlers.ts';

const signatureHeaders = z.object({
  'x-slack-signature': z.string().meta({ description: '`v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<raw body>` with the app\'s signing secret.' }),
  'x-slack-request-timestamp': z.string().meta({ description: 'Unix seconds; refused when more than 5 minutes from now.' }),
});

const REFUSALS = {
  400: errorDoc('A field Slack always sends is missing or malformed (`issues` names it).'),
  401: errorDoc('Not signed by Slack: a header missing, a stale timestamp, or a signature that does not match (`issues` names the header).'),
  413: errorDoc(`Body over ${SLACK_BODY_LIMIT} bytes.`),
  503: errorDoc('Slack app not configured: no signing secret.'),
};

export const SLACK_OPERATIONS: Record<string, OperationDoc> = {
  postSlackCommand: {
    summary: 'The `/flywheel` slash command (Slack signs it; no key): compare, status, sweep, train, experiment start, help',
    request: {
      headers: signatureHeaders,
      body: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': {
            schema: z.object({ command: z.string(), text: z.string(), user_id: z.string(), channel_id: z.string(), thread_ts: z.string().optional() }),
          },
        },
      },
    },
    responses: {
      200: {
        description: 'Acknowledged at once (ephemeral): "Working on it" (the bot answers in the channel), or the usage for help and a command that is not one.',
        content: { 'application/json': { schema: z.object({ response_type: z.literal('ephemeral'), text: z.string() }) } },
      },
      ...REFUSALS,
    },
  },
  postSlackInteraction: {
    summary: "A click on a notice's button in Slack (Slack signs it; no key): the decision is taken by the worker and the message updated",
    request: {
      headers: signatureHeaders,
      body: { required: true, content: { 'application/x-www-form-urlencoded': { schema: z.object({ payload: z.string().meta({ description: 'The `block_actions` payload as JSON.' }) }) } } },
    },
    responses: { 200: { description: 'Acknowledged (empty body); the answer comes as an update of the message.' }, ...REFUSALS },
  },
};
