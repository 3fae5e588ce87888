/**
 * The Slack worker inside `npm start`, shaped like its AWS twin (`lib/people/infra/slack-worker.ts`): a tail of the
 * local event log stands in for the EventBridge rule (`people.slack.work` → a SQLite queue `people-slack` with its
 * dead-letter queue `people-slack-dlq`), and the local queue consumer runs the same SQS handler as the
 * `people/slack-worker` Lambda. The tail's cursor is a record, so work published while the runtime was down is done
 * when it starts.
 *
 * The bot is `FLYWHEEL_SLACK_BOT_TOKEN` (with `FLYWHEEL_SLACK_API_URL` for a stand-in server); without one, work fails
 * and lands in the dead-letter queue, saying so. Admins: `FLYWHEEL_SLACK_ADMIN_USERS`.
 *
 * @example
 * const slack = startLocalSlackWorker(ports, { dataDir, maxReceiveCount: 5, logger });
 * await slack.close();
 */
import { join } from 'node:path';
import type { Logger } from '@aws-lambda-powertools/logger';
import { z } from 'zod';
import { startLocalEventQueue, type LocalEventLog } from '../../../drivers/local/local-event-queue.ts';
import type { SqliteQueue } from '../../../drivers/local/sqlite-queue.ts';
import { ConfigurationError } from '../../../errors.ts';
import type { Ports } from '../../../ports/ports.ts';
import { defineRecordCodec } from '../../../shared/record-codec.ts';
import { sweepSettingsFromEnv } from '../../../sweeps/sweep-settings.ts';
import { makeSlackWorkerHandler } from '../consumers/slack-worker-consumer.ts';
import type { SlackWorkerDeps } from '../run-slack-command.ts';
import { slackAdminsFromEnv } from '../slack-permissions.ts';
import { SLACK_BOT_TOKEN_ENV, slackWebApiFromEnv } from '../slack-web-api.ts';
import { SLACK_WORK_EVENT } from '../slack-work.ts';

/** The key of the tail's cursor record. */
const CURSOR_KEY = { pk: 'PEOPLESLACKLOCAL', sk: 'EVENTCURSOR' } as const;

/** Where the tail stands in the local event log (`PEOPLESLACKLOCAL` / `EVENTCURSOR`). */
export const localSlackCursor = defineRecordCodec({
  kind: 'slack work event cursor',
  schema: z.object({ seq: z.number().int().nonnegative() }),
  keys: () => CURSOR_KEY,
});

export const LOCAL_SLACK_QUEUE_NAMES = { queue: 'people-slack', deadLetters: 'people-slack-dlq' } as const;

/** What the tail reads: the local event log (`LocalEvents.after`). */
export interface SlackWorkPorts extends Ports {
  events: Ports['events'] & LocalEventLog;
}

export interface LocalSlackWorker {
  queue: SqliteQueue;
  deadLetters: SqliteQueue;
  close(): Promise<void>;
}

export function startLocalSlackWorker(
  ports: SlackWorkPorts,
  options: { dataDir: string; maxReceiveCount: number; logger?: Logger; pollMs?: number; visibilityTimeoutSeconds?: number; env?: NodeJS.ProcessEnv },
): LocalSlackWorker {
  const env = options.env ?? process.env;
  // The environment is read per batch, so a bot configured after the start is used.
  const resolveDeps = (): Promise<SlackWorkerDeps> => {
    const slack = slackWebApiFromEnv(env);
    if (!slack) return Promise.reject(new ConfigurationError(`No Slack bot token (${SLACK_BOT_TOKEN_ENV}): the Slack work cannot be answered`));
    const consoleUrl = env.FLYWHEEL_CONSOLE_URL;
    return Promise.resolve({ ports, slack, admins: slackAdminsFromEnv(env), sweepSettings: sweepSettingsFromEnv(env), ...(consoleUrl ? { consoleUrl } : {}) });
  };
  return startLocalEventQueue({
    records: ports.records,
    events: ports.events,
    types: [SLACK_WORK_EVENT],
    cursor: { key: CURSOR_KEY, codec: localSlackCursor },
    file: join(options.dataDir, 'people-slack-queue.sqlite'),
    queueName: LOCAL_SLACK_QUEUE_NAMES.queue,
    deadLetterName: LOCAL_SLACK_QUEUE_NAMES.deadLetters,
    maxReceiveCount: options.maxReceiveCount,
    handler: makeSlackWorkerHandler(resolveDeps),
    queueArn: 'arn:aws:sqs:local:000000000000:flywheel-people-slack',
    visibilityTimeoutSeconds: options.visibilityTimeoutSeconds,
    // One at a time: two clicks on one button are answered one after the other (the second: "already answered").
    concurrency: 1,
    tailName: 'slack work',
    pollMs: options.pollMs ?? 200,
    logger: options.logger,
  });
}
