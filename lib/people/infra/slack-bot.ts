/**
 * The research bot on AWS. Its endpoints are API routes (`people/slack`, made by the API stack from the route table
 * and granted with `grantSlackEndpoints`): they verify Slack's signature, acknowledge, and publish `people.slack.work`
 * on the bus. Here: that event → an EventBridge rule → SQS `people-slack` (+DLQ, queue alarms) → the
 * `people/slack-worker` function, which does the work (compare charts, status, starting sweeps, training runs and
 * experiments, answering decision buttons) and answers in Slack.
 *
 * The secrets are the stage's `notifications.slackApp` (Secrets Manager names; each function reads its own once per
 * cold start); without it the endpoints answer 503 and the worker has nothing to do.
 *
 * @example
 * new SlackBot(this, 'SlackBot', { settings, bus, records: data.records, blobs: data.blobs, alarmTopic, environment, grantWorkflows });
 */
import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { StageSettings } from '../../config/stages.ts';
import { addEventQueueConsumer, type EventConsumerWiring } from '../../constructs/event-queue-consumer.ts';
import { FlywheelFunction } from '../../constructs/flywheel-function.ts';
import type { QueueAlarms } from '../../constructs/queue-alarms.ts';
import { EVENT_SOURCE } from '../../ports/events.ts';
import { SLACK_ADMIN_USERS_ENV } from '../slack/slack-permissions.ts';
import { SLACK_CHANNEL_ENV } from '../slack/slack-web-api.ts';
import { SLACK_WORK_EVENT } from '../slack/slack-work.ts';
import { SLACK_BOT_TOKEN_SECRET_NAME_ENV, SLACK_SIGNING_SECRET_NAME_ENV } from '../slack/verify-slack-request.ts';

/** Seconds the worker may take on a batch: a comparison renders a few charts and uploads them (a few seconds each). */
export const SLACK_WORKER_TIMEOUT_SECONDS = 120;

/** Lets a function read one Secrets Manager secret by name (its ARN ends in a random suffix: `-??????`). */
function grantSecretRead(fn: FlywheelFunction, id: string, secretName: string): void {
  secretsmanager.Secret.fromSecretNameV2(fn, id, secretName).grantRead(fn.role);
}

/**
 * `people/slack` (the API function of `POST /v1/slack/commands` and `/v1/slack/interactions`): publishes the work on
 * the bus; reads the signing secret when the stage configures the app.
 *
 * @example
 * 'people/slack': (fn, data, deps) => grantSlackEndpoints(fn, deps),
 */
export function grantSlackEndpoints(fn: FlywheelFunction, deps?: { bus: events.IEventBus; settings: StageSettings }): void {
  if (deps?.bus) fn.publishEvents(deps.bus);
  const app = deps?.settings.notifications.slackApp;
  if (app) {
    fn.fn.addEnvironment(SLACK_SIGNING_SECRET_NAME_ENV, app.signingSecretName);
    grantSecretRead(fn, 'SigningSecret', app.signingSecretName);
  }
}

export interface SlackBotProps extends EventConsumerWiring {
  /** Grants the worker the sweep and training state machines (passed in by the stack: they are those capabilities' grants). */
  grantWorkflows: (fn: FlywheelFunction) => void;
}

export class SlackBot extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  readonly rule: events.Rule;
  readonly worker: FlywheelFunction;
  readonly alarms: QueueAlarms;

  constructor(scope: Construct, id: string, props: SlackBotProps) {
    super(scope, id);
    const { settings } = props;
    const app = settings.notifications.slackApp;
    const pipe = addEventQueueConsumer(this, {
      settings,
      queue: { visibilityTimeout: Duration.seconds(6 * SLACK_WORKER_TIMEOUT_SECONDS), retentionPeriod: Duration.days(1) },
      ruleId: 'Rule',
      rule: {
        description: 'Slack commands and button clicks the Slack endpoints acknowledged: the worker does them and answers in Slack',
        eventBus: props.bus,
        eventPattern: { source: [EVENT_SOURCE], detailType: [SLACK_WORK_EVENT] },
      },
      maxEventAge: Duration.hours(1),
      consumer: () =>
        new FlywheelFunction(this, 'Worker', {
          lambda: 'people/slack-worker',
          settings,
          // Chart rendering (ECharts → SVG → resvg) wants the memory, and the CPU that comes with it.
          memorySize: 1024,
          timeout: Duration.seconds(SLACK_WORKER_TIMEOUT_SECONDS),
          environment: {
            ...props.environment,
            [SLACK_ADMIN_USERS_ENV]: (app?.adminUserIds ?? []).join(','),
            ...(app?.channelId ? { [SLACK_CHANNEL_ENV]: app.channelId } : {}),
            ...(app ? { [SLACK_BOT_TOKEN_SECRET_NAME_ENV]: app.botTokenSecretName } : {}),
          },
          description: `Flywheel Slack bot worker (${settings.stage}): compare, status, start sweeps, training runs and experiments, answer decisions`,
        }),
      // A batch of one: a piece of work that fails is retried alone, never redoing the others' (a chart posted twice).
      // Two clicks on one button at once are settled by the notice's conditional write: one answers, one is told.
      eventSource: { batchSize: 1 },
      alarmTopic: props.alarmTopic,
      alarms: {
        purpose: 'Slack bot work (people-slack queue)',
        maxAgeSeconds: settings.alarms.queueAgeSeconds.ingest,
        deadLetterHint: 'Slack commands or clicks the worker failed on (Slack down, no bot token, a bug); read them in the SQS console, fix the cause, then redrive them (SQS StartMessageMoveTask). Slack threads may have moved on: answer old ones by hand.',
      },
    });
    ({ queue: this.queue, deadLetterQueue: this.deadLetterQueue, rule: this.rule, consumer: this.worker, alarms: this.alarms } = pipe);
    // Decisions and starts write records (notices, experiments, runs, suites) and publish events (suite.retired,
    // experiment.decided); comparisons read training curves.
    this.worker.readWriteRecords(props.records).readBlobs(props.blobs).publishEvents(props.bus);
    props.grantWorkflows(this.worker);
    if (app) grantSecretRead(this.worker, 'BotToken', app.botTokenSecretName);
  }
}
