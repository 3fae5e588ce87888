/**
 * Experiments on AWS, beside the API routes (whose functions `lib/stacks/api-stack.ts` makes from the route table and
 * grants with `grantExperimentsApi` / `grantAssignments`):
 * - the schedule: EventBridge Scheduler (the stage's `experiments.schedule`) → `experiments/schedule`, which analyses
 *   every tenant's running experiments on Athena and acts (stops an arm on a guardrail breach or SRM, widens a ramp,
 *   stops an experiment past its duration), telling people by raising notices (an arm stopped is an alert, which
 *   reaches the alarm topic through `notice.raised`, `lib/people/infra/notices.ts`; no rule of its own sends
 *   `experiment.arm-stopped` there too);
 * - `experiment.proposed` (a training run's checkpoint beat the incumbent) → SQS (+DLQ, alarms) →
 *   `experiments/proposals`, which drafts the experiment a person approves;
 * - `failure-modes.labelled` → SQS (+DLQ, alarms) → `experiments/failure-mode-metrics`, which archives
 *   `failure_mode.<mode>` rows under `raw/metrics/` for the analyses to count per thousand exposures.
 *
 * @example
 * new ExperimentsPipeline(this, 'Experiments', { settings, bus, records: data.records, blobs: data.blobs, archive: data.archive, alarmTopic, environment });
 */
import { Duration, Stack, TimeZone, Validations } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as schedulerTargets from 'aws-cdk-lib/aws-scheduler-targets';
import { Construct } from 'constructs';
import type { ArtifactsBucket } from '../../constructs/artifacts-bucket.ts';
import { addEventQueueConsumer, type EventConsumerWiring, type EventQueueConsumer } from '../../constructs/event-queue-consumer.ts';
import { nagResourceLabel } from '../../constructs/nag-resource-label.ts';
import { FlywheelFunction } from '../../constructs/flywheel-function.ts';
import type { RecordsTable } from '../../constructs/records-table.ts';
import { EVENT_SOURCE } from '../../ports/events.ts';
import { EXPERIMENT_PROPOSED } from '../../training/runs/events.ts';
import { FAILURE_MODE_METRIC_EVENT_TYPES } from '../consumers/failure-mode-metrics.ts';
import { archiveKeys } from '../record-keys.ts';
import type { ArchiveTables } from './archive-tables.ts';

/** Seconds one schedule tick may run: an Athena query per running experiment, a few seconds each. */
export const EXPERIMENTS_SCHEDULE_TIMEOUT_SECONDS = 600;
/** Seconds a consumer may run on a batch of 10 events (a few reads and puts each). */
const CONSUMER_TIMEOUT_SECONDS = 30;

/** Where the analyses write their lift charts: `experiments/…` of the default tenant, `tenants/<t>/experiments/…` of others. */
const LIFT_CHART_PATTERNS = ['experiments/*', 'tenants/*/experiments/*'] as const;

/** What the parts that analyse need: the archive (Athena), the lift charts (read and write), the records. */
function grantAnalysis(fn: FlywheelFunction, records: RecordsTable, blobs: ArtifactsBucket, archive: ArchiveTables): void {
  fn.readWriteRecords(records);
  archive.grantArchiveQuery(fn.role);
  blobs.grantObjectPatterns(fn.role, {
    read: [...LIFT_CHART_PATTERNS],
    write: [...LIFT_CHART_PATTERNS],
    reason: "An analysis redraws each metric's lift chart under its experiment's key (experiment ids chosen by people), in the default tenant's or a tenant's experiments/ folder; nothing else of the bucket.",
  });
}

/**
 * `experiments/api`: metric definitions, experiments (create, start, stop, read), analyses on Athena and their lift
 * charts, decisions (ship sets the registry incumbent; `experiment.decided` on the bus).
 */
export function grantExperimentsApi(fn: FlywheelFunction, data: { records: RecordsTable; blobs: ArtifactsBucket; archive: ArchiveTables }, bus?: events.IEventBus): void {
  grantAnalysis(fn, data.records, data.blobs, data.archive);
  if (bus) fn.publishEvents(bus);
}

/** `experiments/assign`: reads the running experiments (answers from memory between reads); writes nothing. */
export function grantAssignments(fn: FlywheelFunction, data: { records: RecordsTable }): void {
  fn.readRecords(data.records);
}

export interface ExperimentsPipelineProps extends EventConsumerWiring {
  archive: ArchiveTables;
}

type EventConsumer = EventQueueConsumer<FlywheelFunction>;

export class ExperimentsPipeline extends Construct {
  readonly schedule: scheduler.Schedule;
  readonly scheduleFunction: FlywheelFunction;
  readonly proposals: EventConsumer;
  readonly failureModeMetrics: EventConsumer;

  constructor(scope: Construct, id: string, props: ExperimentsPipelineProps) {
    super(scope, id);
    const { settings } = props;
    const stack = Stack.of(this);

    this.scheduleFunction = new FlywheelFunction(this, 'Schedule', {
      lambda: 'experiments/schedule',
      settings,
      memorySize: 1024,
      timeout: Duration.seconds(EXPERIMENTS_SCHEDULE_TIMEOUT_SECONDS),
      environment: props.environment,
      description: `Flywheel experiments schedule (${settings.stage}): analyses every running experiment, stops arms on a guardrail breach or SRM, widens ramps`,
    });
    grantAnalysis(this.scheduleFunction, props.records, props.blobs, props.archive);
    this.scheduleFunction.publishEvents(props.bus);
    this.scheduleFunction.alarmOnErrors(props.alarmTopic, settings.alarms.handlerErrorThreshold);
    const schedulerRole = new iam.Role(this, 'SchedulerRole', {
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com'),
      description: `Flywheel ${settings.stage}: the experiments schedule invokes the experiments schedule function`,
    });
    const expression = settings.experiments.schedule;
    this.schedule = new scheduler.Schedule(this, 'ScheduleRule', {
      description: `Flywheel ${settings.stage}: analyses running experiments and acts on guardrails, SRM and ramps (${expression.expression})`,
      schedule: scheduler.ScheduleExpression.expression(expression.expression, TimeZone.of(expression.timezone)),
      enabled: expression.enabled,
      target: new schedulerTargets.LambdaInvoke(this.scheduleFunction.fn, {
        role: schedulerRole,
        input: scheduler.ScheduleTargetInput.fromObject({ trigger: 'schedule', scheduledTime: scheduler.ContextAttribute.scheduledTime }),
        // A tick missed is taken by the next one: no retry that would overlap it.
        retryAttempts: 0,
        maxEventAge: Duration.minutes(15),
      }),
    });
    Validations.of(schedulerRole.node.findChild('DefaultPolicy')).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${nagResourceLabel(stack, this.scheduleFunction.fn.functionArn)}:*]`,
      reason: 'The Scheduler target grants invoke on the schedule function and its versions (the construct adds <arn>:*); it is this one function.',
    });

    this.proposals = this.consumer('Proposals', props, {
      lambda: 'experiments/proposals',
      detailTypes: [EXPERIMENT_PROPOSED],
      ruleDescription: "A training run's checkpoint beat the incumbent: draft an experiment for a person to approve",
      purpose: 'Experiment proposals (experiment.proposed queue)',
      hint: 'experiment.proposed events the proposals consumer failed on; read them in the SQS console, fix the cause (a checkpoint not in the registry?), then redrive them (SQS StartMessageMoveTask)',
    });
    // Drafts the experiment and its change (records); raises its decision notice (records; `notice.raised` on the bus)
    // and marks it sent.
    this.proposals.consumer.readWriteRecords(props.records).publishEvents(props.bus);

    this.failureModeMetrics = this.consumer('FailureModeMetrics', props, {
      lambda: 'experiments/failure-mode-metrics',
      detailTypes: [...FAILURE_MODE_METRIC_EVENT_TYPES],
      ruleDescription: 'Failure modes the classifier labelled on feedback become failure_mode.<mode> metric rows in the raw archive',
      purpose: 'Failure-mode metrics (failure-modes.labelled queue)',
      hint: 'failure-modes.labelled events whose rows were not archived; read them in the SQS console, fix the cause, then redrive them (SQS StartMessageMoveTask)',
    });
    // Reads the feedback event the label names; writes one derived object per signal under raw/metrics/ (root blobs).
    this.failureModeMetrics.consumer.readRecords(props.records);
    props.blobs.grantObjectPatterns(this.failureModeMetrics.consumer.role, {
      read: [],
      write: [`${archiveKeys.metricsRoot}*`],
      reason: 'Derived failure-mode rows are archived under raw/metrics/tenant=<t>/dt=<day>/ (keys chosen at run time); nothing else of the bucket.',
    });
  }

  private consumer(
    id: string,
    props: ExperimentsPipelineProps,
    spec: { lambda: string; detailTypes: string[]; ruleDescription: string; purpose: string; hint: string },
  ): EventConsumer {
    const { settings } = props;
    const scope = new Construct(this, id);
    return addEventQueueConsumer(scope, {
      settings,
      queue: { visibilityTimeout: Duration.seconds(6 * CONSUMER_TIMEOUT_SECONDS), retentionPeriod: Duration.days(4) },
      ruleId: 'Rule',
      rule: { description: spec.ruleDescription, eventBus: props.bus, eventPattern: { source: [EVENT_SOURCE], detailType: spec.detailTypes } },
      maxEventAge: Duration.hours(24),
      consumer: () =>
        new FlywheelFunction(scope, 'Consumer', {
          lambda: spec.lambda,
          settings,
          timeout: Duration.seconds(CONSUMER_TIMEOUT_SECONDS),
          environment: props.environment,
          description: `Flywheel ${spec.lambda} (${settings.stage})`,
        }),
      eventSource: { batchSize: 10, maxBatchingWindow: Duration.seconds(5) },
      alarmTopic: props.alarmTopic,
      alarms: { purpose: spec.purpose, maxAgeSeconds: settings.alarms.queueAgeSeconds.modes, deadLetterHint: spec.hint },
    });
  }
}
