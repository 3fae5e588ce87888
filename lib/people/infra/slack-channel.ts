import { Validations } from 'aws-cdk-lib';
import * as chatbot from 'aws-cdk-lib/aws-chatbot';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';

export interface SlackChannelProps {
  stage: string;
  /** The Slack workspace authorised with AWS Chatbot (console, once per account). */
  workspaceId: string;
  channelId: string;
  /** Every message of this topic is posted to the channel. */
  topic: ITopic;
}

/**
 * The alarm topic in a Slack channel, through AWS Chatbot: a channel configuration subscribed to the topic. Chatbot
 * posts CloudWatch alarms as they are and the rules' messages as custom notifications (`chatNotification`).
 *
 * Its role, and the channel guardrail that caps whatever anyone in the channel could do through Chatbot, allow only
 * reading alarms and metric graphs (what Chatbot shows with an alarm); the default guardrail would be
 * AdministratorAccess. The channel runs no commands for anyone.
 *
 * @example
 * new SlackChannel(this, 'Slack', { stage: 'prod', workspaceId: 'T0123ABCD', channelId: 'C0123ABCD', topic: alarmTopic });
 */
export class SlackChannel extends Construct {
  readonly configuration: chatbot.SlackChannelConfiguration;
  readonly role: iam.Role;
  readonly guardrail: iam.ManagedPolicy;

  constructor(scope: Construct, id: string, props: SlackChannelProps) {
    super(scope, id);
    const readAlarms = () =>
      new iam.PolicyDocument({
        statements: [
          new iam.PolicyStatement({
            actions: ['cloudwatch:DescribeAlarms', 'cloudwatch:GetMetricData', 'cloudwatch:GetMetricWidgetImage'],
            resources: ['*'],
          }),
        ],
      });
    const reason =
      'Read-only: cloudwatch:GetMetricData and GetMetricWidgetImage take no resource-level permission, and Chatbot describes the alarm it posts (any alarm of the topic); nothing here writes.';

    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('chatbot.amazonaws.com'),
      description: `Flywheel ${props.stage}: AWS Chatbot posts the alarm topic to Slack (reads alarms and their graphs)`,
      inlinePolicies: { ReadAlarms: readAlarms() },
    });
    Validations.of(this.role).acknowledge({ id: 'AwsSolutions-IAM5[Resource::*]', reason });

    this.guardrail = new iam.ManagedPolicy(this, 'Guardrail', {
      description: `Flywheel ${props.stage}: the most anyone may do through the Slack channel of the alarm topic (read alarms)`,
      document: readAlarms(),
    });
    Validations.of(this.guardrail).acknowledge({ id: 'AwsSolutions-IAM5[Resource::*]', reason });

    this.configuration = new chatbot.SlackChannelConfiguration(this, 'Configuration', {
      slackChannelConfigurationName: `flywheel-${props.stage}-alarms`,
      slackWorkspaceId: props.workspaceId,
      slackChannelId: props.channelId,
      notificationTopics: [props.topic],
      role: this.role,
      guardrailPolicies: [this.guardrail],
      // Errors only (a message Chatbot could not post), to /aws/chatbot/<name> in us-east-1.
      loggingLevel: chatbot.LoggingLevel.ERROR,
    });
  }
}
