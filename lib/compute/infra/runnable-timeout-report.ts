import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import type { FairSharePool } from './fair-share-pool.ts';

export interface RunnableTimeoutReportProps {
  pools: FairSharePool[];
  alarmTopic: ITopic;
}

/**
 * Tells people when a job queue's time-limit action cancelled a job stuck RUNNABLE: an EventBridge rule on Batch's
 * job state changes (default bus) for FAILED jobs of these queues whose status reason is one of the time-limit
 * reasons (`CAPACITY:…`, `MISCONFIGURATION:…`), delivered to the alarm topic as one line naming the job, its queue and
 * the reason.
 */
export class RunnableTimeoutReport extends Construct {
  readonly rule: events.Rule;

  constructor(scope: Construct, id: string, props: RunnableTimeoutReportProps) {
    super(scope, id);
    this.rule = new events.Rule(this, 'Rule', {
      description: 'Batch jobs cancelled after too long RUNNABLE (no capacity or a misconfigured queue): report them',
      eventPattern: {
        source: ['aws.batch'],
        detailType: ['Batch Job State Change'],
        detail: {
          status: ['FAILED'],
          jobQueue: props.pools.map((p) => p.queue.jobQueueArn),
          statusReason: [{ prefix: 'CAPACITY:' }, { prefix: 'MISCONFIGURATION:' }],
        },
      },
    });
    this.rule.addTarget(
      new targets.SnsTopic(props.alarmTopic, {
        message: events.RuleTargetInput.fromText(
          `Batch job ${events.EventField.fromPath('$.detail.jobName')} (${events.EventField.fromPath('$.detail.jobId')}) was cancelled after too long RUNNABLE on ${events.EventField.fromPath('$.detail.jobQueue')}: ${events.EventField.fromPath('$.detail.statusReason')}`,
        ),
      }),
    );
  }
}
