/**
 * Slack's request signature (v0): every request Slack sends carries `X-Slack-Request-Timestamp` and
 * `X-Slack-Signature: v0=<hex HMAC-SHA256(signing secret, "v0:<timestamp>:<raw body>")>`. A request is accepted only
 * when both headers are there, the timestamp is within five minutes of now (a replayed request is refused), and the
 * signature matches in constant time. The raw body is what is signed: verify before parsing it.
 *
 * @example
 * const check = verifySlackRequest({ headers: event.headers, rawBody, signingSecret });
 * if (!check.ok) return { statusCode: 401, body: { error: SlackRequestErrorNames.signature, message: check.reason } };
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The signing secret of the Slack app, locally (on AWS the endpoint reads the stage's secret from Secrets Manager). */
export const SLACK_SIGNING_SECRET_ENV = 'FLYWHEEL_SLACK_SIGNING_SECRET';
/** On AWS: the Secrets Manager secret holding the signing secret (the stage's `notifications.slackApp.signingSecretName`). */
export const SLACK_SIGNING_SECRET_NAME_ENV = 'FLYWHEEL_SLACK_SIGNING_SECRET_NAME';
/** On AWS: the Secrets Manager secret holding the bot token (`notifications.slackApp.botTokenSecretName`). */
export const SLACK_BOT_TOKEN_SECRET_NAME_ENV = 'FLYWHEEL_SLACK_BOT_TOKEN_SECRET_NAME';
/** How far a request's timestamp may be from now, either way (Slack's advice). */
export const SLACK_TIMESTAMP_TOLERANCE_SECONDS = 5 * 60;
export const SLACK_SIGNATURE_HEADER = 'x-slack-signature';
export const SLACK_TIMESTAMP_HEADER = 'x-slack-request-timestamp';

/** The `error` of the endpoints' refusals. */
export const SlackRequestErrorNames = {
  /** 401: a header missing, a stale timestamp or a signature that does not match. */
  signature: 'Flywheel.SlackSignatureInvalid',
  /** 503: no signing secret configured; the endpoints accept nothing unsigned. */
  notConfigured: 'Flywheel.SlackAppNotConfigured',
} as const;

export type SlackVerification = { ok: true } | { ok: false; reason: string; field: 'X-Slack-Signature' | 'X-Slack-Request-Timestamp' };

/** A header's value whatever its case (API Gateway keeps the client's; the local server lower-cases). */
export function headerOf(headers: Record<string, string | undefined> | null | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  const wanted = name.toLowerCase();
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === wanted) return v;
  return undefined;
}

/** `v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<body>`: what Slack sends, and what the tests sign with. */
export function slackSignature(signingSecret: string, timestamp: string, rawBody: string): string {
  return `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${rawBody}`).digest('hex')}`;
}

/**
 * @example
 * verifySlackRequest({ headers: { 'x-slack-signature': 'v0=…', 'x-slack-request-timestamp': '1765000000' }, rawBody, signingSecret: 's', now: new Date() });
 * // { ok: true } or { ok: false, field: 'X-Slack-Request-Timestamp', reason: '…' }
 */
export function verifySlackRequest(input: {
  headers: Record<string, string | undefined> | null | undefined;
  rawBody: string;
  signingSecret: string;
  now?: Date;
}): SlackVerification {
  const timestamp = headerOf(input.headers, SLACK_TIMESTAMP_HEADER);
  const signature = headerOf(input.headers, SLACK_SIGNATURE_HEADER);
  if (!timestamp) return { ok: false, field: 'X-Slack-Request-Timestamp', reason: 'X-Slack-Request-Timestamp header missing' };
  if (!signature) return { ok: false, field: 'X-Slack-Signature', reason: 'X-Slack-Signature header missing' };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, field: 'X-Slack-Request-Timestamp', reason: 'X-Slack-Request-Timestamp is not a Unix time in seconds' };
  const nowSeconds = Math.floor((input.now ?? new Date()).getTime() / 1000);
  if (Math.abs(nowSeconds - Number(timestamp)) > SLACK_TIMESTAMP_TOLERANCE_SECONDS) {
    return { ok: false, field: 'X-Slack-Request-Timestamp', reason: `X-Slack-Request-Timestamp is more than ${SLACK_TIMESTAMP_TOLERANCE_SECONDS / 60} minutes from now (a replay?)` };
  }
  const expected = Buffer.from(slackSignature(input.signingSecret, timestamp, input.rawBody), 'utf8');
  const given = Buffer.from(signature, 'utf8');
  // Lengths first: timingSafeEqual needs equal lengths, and a length says nothing about the secret.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, field: 'X-Slack-Signature', reason: 'X-Slack-Signature does not match the request (signed with another secret, or the body changed)' };
  }
  return { ok: true };
}
