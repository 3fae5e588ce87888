import * as events from 'aws-cdk-lib/aws-events';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { noticeRule } from '../../constructs/chat-notification.ts';
import { EVENT_SOURCE } from '../../ports/events.ts';
import { SWEEP_REFUSED } from '../workflow/start-sweep-from-trigger.ts';

export interface SweepNoticesProps {
  bus: events.IEventBus;
  alarmTopic: ITopic;
}

/**
 * The one sweep event routed to the alarm topic by a rule of its own (and so to its e-mail subscribers and the stage's
 * Slack channel): `sweep.refused`, the schedule or a registered checkpoint asked for a sweep that cannot start. It
 * raises no notice (the trigger answers rather than throws), so this rule is how people hear of it.
 *
 * A saturated suite and a sweep that finishes `partial` or `failed` raise notices (`checkSaturation`, `notifySweep`:
 * alerts and warnings), which reach the alarm topic through `notice.raised` (`lib/people/infra/notices.ts`); a rule
 * here on `suite.saturated` or `sweep.finished` would tell people twice.
 */
export class SweepNotices extends Construct {
  readonly onRefused: events.Rule;

  constructor(scope: Construct, id: string, props: SweepNoticesProps) {
    super(scope, id);
    const field = (path: string) => events.EventField.fromPath(path);
    const sweepId = field('$.detail.sweepId');

    this.onRefused = noticeRule(this, 'OnSweepRefused', {
      description: 'A trigger (the schedule, a registered checkpoint) asked for a sweep that cannot start: tell people why',
      eventBus: props.bus,
      eventPattern: { source: [EVENT_SOURCE], detailType: [SWEEP_REFUSED] },
      alarmTopic: props.alarmTopic,
      notice: {
        title: `Sweep ${sweepId} did not start`,
        description: `The ${field('$.detail.trigger')} trigger asked for sweep ${sweepId}, which cannot start as asked. ${field('$.detail.message')}`,
        nextSteps: [`Fix what the message names (register or reactivate a suite or checkpoint, or split the selection), then: flywheel sweep start --sweep-id ${sweepId}`],
        threadId: `sweep-${sweepId}`,
      },
    });
  }
}
