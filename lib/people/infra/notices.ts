/**
 * The notices on AWS:
 * - the alarm topic: every `notice.raised` a warning or an alert (published by `deliverNotice` when a notice is first
 *   delivered) goes to the existing alarm topic (e-mail, and the stage's Slack channel through AWS Chatbot), with its
 *   title, text and the console link; `info` notices stay in Slack and the notices history. It is the one path there
 *   for whatever raises a notice: no capability keeps a rule of its own on the same happening (that told people twice);
 * - the schedule: EventBridge Scheduler every 5 minutes → `people/notices-schedule`, which reports every tenant's
 *   watched runs silent past their stage window (`notices.stallWindowsMinutes`) and delivers the notices that waited
 *   out quiet hours (`notices.quietHours`).
 *
 * @example
 * new PeopleNotices(this, 'Notices', { settings, bus, records: data.records, alarmTopic, environment });
 */
import { Duration, Stack, TimeZone, Validations } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as schedulerTargets from 'aws-cdk-lib/aws-scheduler-targets';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import type { StageSettings } from '../../config/stages.ts';
import { noticeRule } from '../../constructs/chat-notification.ts';
import { FlywheelFunction } from '../../constructs/flywheel-function.ts';
import { nagResourceLabel } from '../../constructs/nag-resource-label.ts';
import type { RecordsTable } from '../../constructs/records-table.ts';
import { EVENT_SOURCE } from '../../ports/events.ts';
import { NOTICE_RAISED } from '../notices/deliver-notice.ts';
import { NOTICES_SCHEDULE } from '../notices/run-notices-schedule.ts';

/** Seconds one tick may run: a query of the watched runs and the open notices per tenant, a Slack post each. */
export const NOTICES_SCHEDULE_TIMEOUT_SECONDS = 120;

export interface PeopleNoticesProps {
  settings: StageSettings;
  bus: events.IEventBus;
  records: RecordsTable;
  alarmTopic: ITopic;
  environment: Record<string, string>;
}

export class PeopleNotices extends Construct {
  readonly onRaised: events.Rule;
  readonly scheduleFunction: FlywheelFunction;
  readonly schedule: scheduler.Schedule;

  constructor(scope: Construct, id: string, props: PeopleNoticesProps) {
    super(scope, id);
    const { settings } = props;
    const field = (path: string) => events.EventField.fromPath(path);
    this.onRaised = noticeRule(this, 'OnNoticeRaised', {
      description: 'A notice (a failure, a stall, a decision, a budget) was raised as a warning or an alert: tell people',
      eventBus: props.bus,
      eventPattern: { source: [EVENT_SOURCE], detailType: [NOTICE_RAISED], detail: { severity: ['warning', 'alert'] } },
      alarmTopic: props.alarmTopic,
      notice: {
        title: `${field('$.detail.title')}`,
        description: `${field('$.detail.text')}`,
        nextSteps: [`Open it: ${field('$.detail.link')}`, `Or: flywheel notices show ${field('$.detail.noticeId')} (FLYWHEEL_API_URL and FLYWHEEL_API_KEY of the stage set)`],
        threadId: `notice-${field('$.detail.dedupKey')}`,
      },
    });

    this.scheduleFunction = new FlywheelFunction(this, 'Schedule', {
      lambda: 'people/notices-schedule',
      settings,
      timeout: Duration.seconds(NOTICES_SCHEDULE_TIMEOUT_SECONDS),
      environment: props.environment,
      description: `Flywheel notices schedule (${settings.stage}): reports stalled runs, delivers notices after quiet hours`,
    });
    // Reads API keys (the tenants), watched runs and notices; writes notices and watches; publishes notice.raised.
    this.scheduleFunction.readWriteRecords(props.records).publishEvents(props.bus);
    this.scheduleFunction.alarmOnErrors(props.alarmTopic, settings.alarms.handlerErrorThreshold);
    const schedulerRole = new iam.Role(this, 'SchedulerRole', {
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com'),
      description: `Flywheel ${settings.stage}: the notices schedule invokes the notices schedule function`,
    });
    this.schedule = new scheduler.Schedule(this, 'ScheduleRule', {
      description: `Flywheel ${settings.stage}: stalled runs and notices deferred by quiet hours (${NOTICES_SCHEDULE.expression})`,
      schedule: scheduler.ScheduleExpression.expression(NOTICES_SCHEDULE.expression, TimeZone.of(NOTICES_SCHEDULE.timezone)),
      enabled: NOTICES_SCHEDULE.enabled,
      target: new schedulerTargets.LambdaInvoke(this.scheduleFunction.fn, {
        role: schedulerRole,
        input: scheduler.ScheduleTargetInput.fromObject({ trigger: 'schedule', scheduledTime: scheduler.ContextAttribute.scheduledTime }),
        // A tick missed is taken by the next one: no retry that would overlap it.
        retryAttempts: 0,
        maxEventAge: Duration.minutes(5),
      }),
    });
    Validations.of(schedulerRole.node.findChild('DefaultPolicy')).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${nagResourceLabel(Stack.of(this), this.scheduleFunction.fn.functionArn)}:*]`,
      reason: 'The Scheduler target grants invoke on the schedule function and its versions (the construct adds <arn>:*); it is this one function.',
    });
  }
}
