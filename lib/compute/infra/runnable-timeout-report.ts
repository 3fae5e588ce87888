import * as events from 'aws-cdk-lib/aws-events';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { noticeRule } from '../../constructs/chat-notification.ts';
import { type FairSharePool, RUNNABLE_TIMEOUT_REASONS } from './fair-share-pool.ts';

export interface RunnableTimeoutReportProps {
  pools: FairSharePool[];
  alarmTopic: ITopic;
}

/**
 * How a job's `statusReason` starts once its queue's time-limit action has cancelled it; the action's reason follows,
 * e.g. `Canceled by JobStateTimeLimit action due to reason: CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY` (AWS Batch user
 * guide, "Jobs stuck in RUNNABLE due to capacity" / "… due to misconfiguration"). Only while the job still waits does
 * the reason read `CAPACITY:… - <detail>`, and that job is RUNNABLE, not FAILED.
 */
export const TIME_LIMIT_CANCEL_PREFIX = 'Canceled by JobStateTimeLimit action due to reason: ';

/**
 * Tells people when a job queue's time-limit action cancelled a job stuck RUNNABLE: an EventBridge rule on Batch's
 * job state changes (default bus) for FAILED jobs of these queues whose status reason is the cancel text of one of the
 * queues' time-limit reasons (`TIME_LIMIT_CANCEL_PREFIX` + `CAPACITY:…`/`MISCONFIGURATION:…`), delivered to the alarm
 * topic naming the job, its queue and Batch's reason text. Nothing raises a notice for such a job (compute accounting
 * records its usage only), so this rule is how people hear of it.
 */
export class RunnableTimeoutReport extends Construct {
  readonly rule: events.Rule;

  constructor(scope: Construct, id: string, props: RunnableTimeoutReportProps) {
    super(scope, id);
    const field = (path: string) => events.EventField.fromPath(path);
    this.rule = noticeRule(this, 'Rule', {
      description: 'Batch jobs cancelled after too long RUNNABLE (no capacity or a misconfigured queue): report them',
      eventPattern: {
        source: ['aws.batch'],
        detailType: ['Batch Job State Change'],
        detail: {
          status: ['FAILED'],
          jobQueue: props.pools.map((p) => p.queue.jobQueueArn),
          statusReason: RUNNABLE_TIMEOUT_REASONS.map((reason) => ({ prefix: `${TIME_LIMIT_CANCEL_PREFIX}${reason}` })),
        },
      },
      alarmTopic: props.alarmTopic,
      notice: {
        title: `Batch job ${field('$.detail.jobName')} was cancelled after too long RUNNABLE`,
        description: `Job ${field('$.detail.jobName')} (${field('$.detail.jobId')}) on ${field('$.detail.jobQueue')}: ${field('$.detail.statusReason')}`,
        nextSteps: [
          'CAPACITY: no instance of the pool families could be had (quota or regional capacity): raise the EC2 quota or add a family to the pool in lib/config/stages.ts',
          'MISCONFIGURATION: the job asks for more than the compute environment offers: check the job definition resources against the pool',
        ],
      },
    });
  }
}
