import * as events from 'aws-cdk-lib/aws-events';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { noticeRule } from '../../constructs/chat-notification.ts';
import { EVENT_SOURCE } from '../../ports/events.ts';
import { SUITE_SATURATED } from '../check-saturation.ts';
import { SWEEP_FINISHED } from '../notify-sweep.ts';
import { SWEEP_REFUSED } from '../workflow/start-sweep-from-trigger.ts';

export interface SweepNoticesProps {
  bus: events.IEventBus;
  alarmTopic: ITopic;
}

/**
 * What the sweep steps publish on the Flywheel bus that someone has to act on, routed to the alarm topic (and so to
 * its e-mail subscribers and the stage's Slack channel): `suite.saturated` (retire the suite or forge harder tasks)
 * `sweep.finished` whose status is anything but `succeeded` (some or all shards failed), and `sweep.refused` (the
 * schedule or a registered checkpoint asked for a sweep that cannot start). Each rule turns the
 * event's detail (see `checkSaturation` and `notifySweep`) into a short notice; the steps' own Slack webhook, when
 * configured, says the same in more detail.
 */
export class SweepNotices extends Construct {
  readonly onSaturated: events.Rule;
  readonly onUnsuccessful: events.Rule;
  readonly onRefused: events.Rule;

  constructor(scope: Construct, id: string, props: SweepNoticesProps) {
    super(scope, id);
    const field = (path: string) => events.EventField.fromPath(path);

    const suite = `${field('$.detail.suite')} v${field('$.detail.version')}`;
    this.onSaturated = noticeRule(this, 'OnSuiteSaturated', {
      description: 'A suite reached its saturation threshold: propose to retire it or forge harder tasks',
      eventBus: props.bus,
      eventPattern: { source: [EVENT_SOURCE], detailType: [SUITE_SATURATED] },
      alarmTopic: props.alarmTopic,
      notice: {
        title: `Suite ${suite} is saturated`,
        description:
          `Best strict score ${field('$.detail.score')} (${field('$.detail.checkpoint')}, sweep ${field('$.detail.sweepId')}) ` +
          `reached the threshold ${field('$.detail.threshold')}: the suite no longer separates checkpoints. ` +
          `Useful life ${field('$.detail.usefulLifeDays')} days.`,
        nextSteps: [`Retire suite ${suite}`, `Or forge harder tasks for its next version`],
        threadId: `suite-${field('$.detail.suite')}`,
      },
    });

    const sweepId = field('$.detail.sweepId');
    this.onUnsuccessful = noticeRule(this, 'OnSweepUnsuccessful', {
      description: 'A sweep finished with failed shards (partial or failed): tell people',
      eventBus: props.bus,
      eventPattern: { source: [EVENT_SOURCE], detailType: [SWEEP_FINISHED], detail: { status: events.Match.anythingBut('succeeded') } },
      alarmTopic: props.alarmTopic,
      notice: {
        title: `Sweep ${sweepId} ${field('$.detail.status')}: ${field('$.detail.failedShards')} shard(s) failed`,
        description:
          `Sweep ${sweepId} finished ${field('$.detail.status')}: ${field('$.detail.failedShards')} shard(s) failed, ` +
          `${field('$.detail.succeededShards')} succeeded; ${field('$.detail.regressions')} regression(s) against the incumbent.`,
        nextSteps: [
          `See the failed shards: flywheel sweep status ${sweepId} (FLYWHEEL_API_URL and FLYWHEEL_API_KEY of the stage set)`,
          `Retry its failed shards, finished ones kept: flywheel sweep start --sweep-id ${sweepId}`,
        ],
        threadId: `sweep-${sweepId}`,
      },
    });

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
