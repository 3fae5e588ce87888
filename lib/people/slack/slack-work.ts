/**
 * What the Slack endpoints hand to the worker. Slack wants an answer within 3 seconds, so the endpoints verify the
 * request, validate it, acknowledge at once and publish one `people.slack.work` event; the worker (an EventBridge rule →
 * SQS `people-slack` (+DLQ) → `functions/people/slack-worker.ts` on AWS, the event-log tail → a SQLite queue → the
 * same handler under `npm start`) does the work and answers in Slack through the Web API.
 *
 * @example
 * await ports.events.publish([{ type: SLACK_WORK_EVENT, detail: SlackWork.parse({ kind: 'command', … }) }]);
 */
import { z } from 'zod';

/** The detail-type of the worker's events. */
export const SLACK_WORK_EVENT = 'people.slack.work';

const slackId = z.string().regex(/^[A-Z0-9]{2,32}$/, 'a Slack id (letters and digits, e.g. U0123ABCD)');
/** A message timestamp (`1712345678.000100`), which is also a thread's id. */
export const SlackTs = z.string().regex(/^\d{1,12}(\.\d{1,8})?$/, 'a Slack message timestamp (e.g. 1712345678.000100)');

export const SlackCommandWork = z.strictObject({
  kind: z.literal('command'),
  teamId: z.string().max(32).optional(),
  channelId: slackId,
  userId: slackId,
  userName: z.string().max(128).optional(),
  /** `/flywheel`. */
  command: z.string().min(1).max(64),
  /** What followed the command (`compare run-a run-b`). */
  text: z.string().max(4000),
  /** The thread the command was typed in, when Slack says. */
  threadTs: SlackTs.optional(),
  receivedAt: z.iso.datetime(),
});
export type SlackCommandWork = z.infer<typeof SlackCommandWork>;

export const SlackInteractionWork = z.strictObject({
  kind: z.literal('interaction'),
  channelId: slackId,
  userId: slackId,
  userName: z.string().max(128).optional(),
  /** The message whose button was clicked (updated in place), and its thread when it is in one. */
  messageTs: SlackTs,
  threadTs: SlackTs.optional(),
  actionId: z.string().min(1).max(255),
  value: z.string().max(2000),
  receivedAt: z.iso.datetime(),
});
export type SlackInteractionWork = z.infer<typeof SlackInteractionWork>;

export const SlackWork = z.discriminatedUnion('kind', [SlackCommandWork, SlackInteractionWork]);
export type SlackWork = z.infer<typeof SlackWork>;
