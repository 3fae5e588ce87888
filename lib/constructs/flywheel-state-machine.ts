import { type Acknowledgment, ArnFormat, type CfnResource, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, type Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import type { StageSettings } from '../config/stages.ts';
import type { ArtifactsBucket } from './artifacts-bucket.ts';
import type { RecordsTable } from './records-table.ts';
import { type FlywheelFunction, retentionDays } from './flywheel-function.ts';
import { nagResourceLabel } from './nag-resource-label.ts';

/** What every workflow construct (the sweep, the judge derivation, training) is given by the Workflows stack. */
export interface WorkflowConstructProps {
  settings: StageSettings;
  records: RecordsTable;
  blobs: ArtifactsBucket;
  bus: IEventBus;
  alarmTopic: ITopic;
  /** Variables every function gets (the AWS ports' configuration). */
  environment: Record<string, string>;
}

export interface FlywheelStateMachineProps {
  settings: StageSettings;
  /** `flywheel-<stage>-<workflow>`: the API stack reaches the machine by this name (`grantExecutions`). */
  stateMachineName: string;
  /** The ASL document, with this stack's tokens (function, queue and job definition ARNs). */
  definition: object;
  comment: string;
  roleDescription: string;
  /** The step functions it invokes: unqualified ARNs (grantInvoke would add `<arn>:*`, every version and alias). */
  invokes: string[];
  /** The job queue and job definitions its `.sync` Batch tasks submit to. */
  submitsTo: string[];
  /** The `.sync` job in words, for the nag reasons (`trainer job`). */
  job: string;
  /** More statements for the role, added before the state machine adds its logging and tracing ones. */
  statements?: iam.PolicyStatement[];
  /** Nag acknowledgements of those statements' resources, on the role's policy. */
  acknowledgements?: Acknowledgment[];
}

export interface FlywheelStateMachineParts {
  stateMachine: sfn.StateMachine;
  role: iam.Role;
  logs: LogGroup;
}

/**
 * A Standard state machine of Flywheel that runs Lambda steps and `.sync` Batch jobs, built from an ASL document (the
 * one the local runtime runs; see `SweepStateMachine` for why not CDK's state classes): its log group under
 * `/aws/vendedlogs/states/`, its role (invoke the steps, submit to the queue and definitions, poll and stop its jobs,
 * the managed rule `.sync` waits with), and the machine with every event logged and X-Ray tracing.
 *
 * It adds `Logs`, `Role` and `StateMachine` to `scope` itself rather than under a construct of its own, so that the
 * logical ids of the machines built before it existed stay as they were (`test/infra/stateful-logical-ids.test.ts`).
 *
 * @example
 * const { stateMachine } = addFlywheelStateMachine(this, {
 *   settings, stateMachineName: 'flywheel-dev-train', definition, comment: 'Flywheel training run',
 *   roleDescription: 'Training state machine of Flywheel dev', invokes: [step.fn.functionArn],
 *   submitsTo: [queueArn, jobDefinitionArn], job: 'trainer job',
 * });
 */
export function addFlywheelStateMachine(scope: Construct, props: FlywheelStateMachineProps): FlywheelStateMachineParts {
  const { settings, stateMachineName } = props;
  const stack = Stack.of(scope);
  const logs = new LogGroup(scope, 'Logs', {
    // Step Functions wants its vended-log groups under /aws/vendedlogs/ (resource policy size).
    logGroupName: `/aws/vendedlogs/states/${stateMachineName}`,
    retention: retentionDays(settings.logRetentionDays),
    removalPolicy: settings.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
  });

  const role = new iam.Role(scope, 'Role', { assumedBy: new iam.ServicePrincipal('states.amazonaws.com'), description: props.roleDescription });
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: props.invokes }));
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['batch:SubmitJob'], resources: props.submitsTo }));
  // DescribeJobs takes no resource; TerminateJob (Step Functions stops the .sync job with it) is granted on job ARNs
  // of this account and region only. Job ids are Batch's, so the ARN cannot name one job ahead of time.
  const jobArns = stack.formatArn({ service: 'batch', resource: 'job', resourceName: '*' });
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['batch:DescribeJobs'], resources: ['*'] }));
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['batch:TerminateJob'], resources: [jobArns] }));
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['events:PutTargets', 'events:PutRule', 'events:DescribeRule'],
      resources: [stack.formatArn({ service: 'events', resource: 'rule', resourceName: 'StepFunctionsGetEventsForBatchJobsRule' })],
    }),
  );
  for (const statement of props.statements ?? []) role.addToPrincipalPolicy(statement);

  const stateMachine = new sfn.StateMachine(scope, 'StateMachine', {
    stateMachineName,
    stateMachineType: sfn.StateMachineType.STANDARD,
    definitionBody: sfn.DefinitionBody.fromString(stack.toJsonString(props.definition)),
    role,
    // The execution timeout is the definition's own TimeoutSeconds, as the local runtime runs it.
    tracingEnabled: true,
    logs: { destination: logs, level: sfn.LogLevel.ALL, includeExecutionData: true },
    comment: props.comment,
  });
  // CDK makes the state machine DependsOn its role's policy and GetAtts the role; cfn-lint reports the role's
  // dependency as redundant (W3005). The policy must exist first, so keep it and silence that one check here.
  (stateMachine.node.defaultChild as CfnResource).addMetadata('cfn-lint', { config: { ignore_checks: ['W3005'] } });

  const policy = role.node.tryFindChild('DefaultPolicy');
  if (policy) {
    Validations.of(policy).acknowledge(
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: `batch:DescribeJobs takes no resource-level permission (Step Functions polls the .sync ${props.job} with it); log delivery and X-Ray actions the state machine adds support no resource either.`,
      },
      {
        id: `AwsSolutions-IAM5[Resource::${nagResourceLabel(stack, jobArns)}]`,
        reason: `Step Functions stops the .sync ${props.job} it submitted with batch:TerminateJob; job ids are chosen by Batch at submit time, so it is granted on the job ARNs of this account and region (no job queue, definition or other resource).`,
      },
      ...(props.acknowledgements ?? []),
    );
  }
  return { stateMachine, role, logs };
}

/** How an execution can end badly, each with its CloudWatch metric. */
export type ExecutionOutcome = 'Failed' | 'TimedOut' | 'Aborted';

/** Executions are counted per 5 minutes: one ending badly is enough (threshold 1), none is no news (missing = OK). */
const PER_FIVE_MINUTES = { period: Duration.minutes(5), statistic: 'Sum' } as const;

const OUTCOME_METRICS: Record<ExecutionOutcome, (machine: sfn.StateMachine) => Metric> = {
  Failed: (machine) => machine.metricFailed(PER_FIVE_MINUTES),
  TimedOut: (machine) => machine.metricTimedOut(PER_FIVE_MINUTES),
  Aborted: (machine) => machine.metricAborted(PER_FIVE_MINUTES),
};

/**
 * One alarm per outcome named in `descriptions` (`Executions<Outcome>` in `scope`): 1 or more such executions in
 * 5 minutes, to the alarm topic and back to OK, like the functions' error alarms. Leave out an outcome that is no
 * news (an execution a person stopped ends as aborted).
 *
 * @example
 * alarmOnExecutions(this, stateMachine, alarmTopic, { Failed: 'A training run failed. …', TimedOut: '…' });
 */
export function alarmOnExecutions<O extends ExecutionOutcome>(
  scope: Construct,
  stateMachine: sfn.StateMachine,
  alarmTopic: ITopic,
  descriptions: Record<O, string>,
): Record<O, Alarm> {
  const entries = (Object.entries(descriptions) as [O, string][]).map(([outcome, alarmDescription]) => {
    const alarm = new Alarm(scope, `Executions${outcome}`, {
      alarmDescription,
      metric: OUTCOME_METRICS[outcome](stateMachine),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(new SnsAction(alarmTopic));
    alarm.addOkAction(new SnsAction(alarmTopic));
    return [outcome, alarm] as const;
  });
  return Object.fromEntries(entries) as Record<O, Alarm>;
}

export interface GrantExecutionsOptions {
  /** `flywheel-<stage>-<workflow>`; the machine may live in a stack built later, so it is reached by name. */
  stateMachineName: string;
  /** The variable the Step Functions workflows driver reads the machine's ARN from (`stateMachineEnvName`). */
  environmentVariable: string;
  /** What the function may do to the executions it starts (`states:DescribeExecution`, …). */
  actions: string[];
  /** Why those actions are granted on every execution of the machine, for the nag acknowledgement. */
  reason: string;
}

/**
 * Lets `fn` start executions of a state machine named ahead of time (`states:StartExecution` on the machine), act on
 * them (`actions` on its executions), and find it (its ARN in `environmentVariable`).
 *
 * @example
 * grantExecutions(fn, { stateMachineName: 'flywheel-dev-sweep', environmentVariable: 'FLYWHEEL_STATE_MACHINE_SWEEP',
 *   actions: ['states:DescribeExecution'], reason: 'executions named after sweep ids known only at run time' });
 */
export function grantExecutions(fn: FlywheelFunction, options: GrantExecutionsOptions): void {
  const stack = Stack.of(fn);
  const name = options.stateMachineName;
  const machine = stack.formatArn({ service: 'states', resource: 'stateMachine', resourceName: name, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
  const executions = stack.formatArn({ service: 'states', resource: 'execution', resourceName: `${name}:*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
  fn.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['states:StartExecution'], resources: [machine] }));
  fn.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: options.actions, resources: [executions] }));
  fn.fn.addEnvironment(options.environmentVariable, machine);
  Validations.of(fn.role.node.findChild('DefaultPolicy')).acknowledge({
    id: `AwsSolutions-IAM5[Resource::${nagResourceLabel(stack, executions)}]`,
    reason: options.reason,
  });
}
