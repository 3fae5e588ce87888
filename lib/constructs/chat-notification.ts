import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';

/** What one rule tells people: EventBridge placeholders (`EventField.fromPath`) may appear in any string. */
export interface ChatNotification {
  /** One line, e.g. `Suite forge-py v2 is saturated`. */
  title: string;
  /** A sentence or two: what happened, with the numbers. */
  description: string;
  /** What someone should do about it. */
  nextSteps?: string[];
  /** Notices with the same thread id are grouped in one Slack thread (a sweep id, a suite id). */
  threadId?: string;
}

/**
 * The input an EventBridge rule hands the alarm topic: a custom notification of AWS Chatbot (Amazon Q Developer in
 * chat applications), `{ version: '1.0', source: 'custom', content: { title, description, nextSteps } }`.
 *
 * Why this shape and not a plain sentence: Chatbot forwards to Slack only SNS messages in a format it knows (CloudWatch
 * alarms, EventBridge events, custom notifications) and drops plain text, so a rule's message in any other shape would
 * never reach the channel the stage's `notifications.slack` configures. E-mail subscribers get the same short JSON.
 *
 * Placeholders inside these strings are filled in as they are: keep them to ids, numbers and AWS's own reason text
 * (no double quotes), or the message would no longer be JSON.
 *
 * @example
 * chatNotification({ title: `Sweep ${events.EventField.fromPath('$.detail.sweepId')} failed`, description: '…' })
 */
export function chatNotification(notice: ChatNotification): events.RuleTargetInput {
  return events.RuleTargetInput.fromObject({
    version: '1.0',
    source: 'custom',
    content: {
      title: notice.title,
      description: notice.description,
      ...(notice.nextSteps?.length ? { nextSteps: notice.nextSteps } : {}),
    },
    ...(notice.threadId ? { metadata: { threadId: notice.threadId } } : {}),
  });
}

export interface NoticeRuleProps {
  description: string;
  /** The Flywheel bus; absent: the default bus (where AWS services such as Batch publish). */
  eventBus?: events.IEventBus;
  eventPattern: events.EventPattern;
  alarmTopic: ITopic;
  notice: ChatNotification;
}

/**
 * An EventBridge rule that tells people: events matching the pattern reach the alarm topic as a `chatNotification`.
 * What raises a notice reaches the topic through `notice.raised` (`OnNoticeRaised`, `lib/people/infra/notices.ts`):
 * a rule of its own on the same happening would tell people twice, so a rule is for what raises none.
 *
 * @example
 * noticeRule(this, 'OnSweepRefused', { eventBus: bus, eventPattern: { detailType: ['sweep.refused'] }, alarmTopic, notice });
 */
export function noticeRule(scope: Construct, id: string, props: NoticeRuleProps): events.Rule {
  const rule = new events.Rule(scope, id, { description: props.description, ...(props.eventBus ? { eventBus: props.eventBus } : {}), eventPattern: props.eventPattern });
  rule.addTarget(new targets.SnsTopic(props.alarmTopic, { message: chatNotification(props.notice) }));
  return rule;
}
