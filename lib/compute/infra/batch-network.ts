import { RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { ModelEndpointEgress, StageSettings } from '../../config/stages.ts';
import { ConfigurationError } from '../../errors.ts';
import { retentionDays } from '../../constructs/flywheel-function.ts';

export interface BatchNetworkProps {
  settings: StageSettings;
}

/**
 * The network Batch jobs run in, with egress on one controlled path so the strict harness's allow-list holds in AWS
 * as it does locally:
 *
 * - Instances live in private subnets only (no public IP); the one way out is the NAT gateway of the VPC, so egress
 *   leaves from known addresses and shows in the VPC flow logs (kept in CloudWatch for the stage's retention).
 * - The jobs' security group allows no inbound traffic and outbound HTTPS (443) only: model endpoints, Bedrock, ECR,
 *   CloudWatch Logs. DNS goes to the VPC resolver, which security groups do not filter. Plain HTTP, SSH or anything
 *   else never leaves the instance, except to the model endpoints the stage lists in `modelEndpointEgress` (one
 *   address range and TCP port each, e.g. a vLLM server on 8000 in a peered VPC): an endpoint-served checkpoint on
 *   another port than 443 is reachable from a rollout job only when listed there.
 * - S3 and DynamoDB are reached through gateway endpoints (no NAT, no internet): blobs and records stay on the AWS
 *   network.
 * - Inside the instance, each attempt's sandbox has its own network namespace whose only route out is the harness's
 *   egress proxy (`lib/harness/sandbox/egress-proxy.ts`), which applies the task's host allow-list and logs every
 *   request. So the allow-list is enforced per attempt by the proxy, and the security group bounds what even the proxy
 *   may reach. Where an account needs the host list enforced at the network edge too, an AWS Network Firewall with a
 *   domain allow-list can sit between the private subnets and the NAT; it is not built here (its fixed hourly cost
 *   is not warranted while the proxy enforces the list).
 *
 * Production gets one NAT gateway per AZ (an AZ outage does not stop egress); dev shares one.
 */
export class BatchNetwork extends Construct {
  readonly vpc: ec2.Vpc;
  readonly jobSecurityGroup: ec2.SecurityGroup;

  constructor(scope: Construct, id: string, props: BatchNetworkProps) {
    super(scope, id);
    const { settings } = props;
    const flowLogs = new LogGroup(this, 'FlowLogs', {
      retention: retentionDays(settings.logRetentionDays),
      removalPolicy: settings.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    this.vpc = new ec2.Vpc(this, 'Vpc', {
      // The stack's two AZs (ComputeStack.availabilityZones: Fn::GetAZs, resolved by CloudFormation).
      maxAzs: 2,
      natGateways: settings.retainData ? 2 : 1,
      subnetConfiguration: [
        { name: 'egress', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24, mapPublicIpOnLaunch: false },
        { name: 'jobs', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 20 },
      ],
      gatewayEndpoints: {
        S3: { service: ec2.GatewayVpcEndpointAwsService.S3 },
        DynamoDB: { service: ec2.GatewayVpcEndpointAwsService.DYNAMODB },
      },
      // Nothing uses the VPC's default security group (instances get `jobSecurityGroup`). Emptying it takes a
      // CDK custom-resource Lambda; this project deploys only its own bundled functions, so it is left as created.
      restrictDefaultSecurityGroup: false,
    });
    // Flow logs as the L1 resource with its own delivery role: the L2 FlowLog adds CloudFormation-Validate
    // acknowledgments at construct level, which this project keeps for cdk-nag findings only.
    const flowLogsRole = new iam.Role(this, 'FlowLogsRole', {
      assumedBy: new iam.ServicePrincipal('vpc-flow-logs.amazonaws.com'),
      description: `Flywheel ${settings.stage}: VPC flow logs delivery to CloudWatch Logs`,
    });
    flowLogs.grantWrite(flowLogsRole);
    new ec2.CfnFlowLog(this, 'FlowLog', {
      resourceId: this.vpc.vpcId,
      resourceType: 'VPC',
      trafficType: 'ALL',
      logDestinationType: 'cloud-watch-logs',
      logGroupName: flowLogs.logGroupName,
      deliverLogsPermissionArn: flowLogsRole.roleArn,
    });

    this.jobSecurityGroup = new ec2.SecurityGroup(this, 'JobSecurityGroup', {
      vpc: this.vpc,
      allowAllOutbound: false,
      // Kept as it was when modelEndpointEgress came: a new group description replaces the group (and so every
      // compute environment that uses it). The rules themselves say what else may leave.
      description: `Flywheel ${settings.stage} Batch jobs: no inbound, HTTPS out only (through the NAT gateway or the gateway endpoints)`,
    });
    this.jobSecurityGroup.addEgressRule(ec2.Peer.anyIpv4(), ec2.Port.tcp(443), 'HTTPS: model endpoints, Bedrock, ECR, CloudWatch Logs, S3, DynamoDB');
    settings.modelEndpointEgress.forEach((egress, i) => {
      checkModelEndpointEgress(egress, `modelEndpointEgress[${i}]`);
      this.jobSecurityGroup.addEgressRule(ec2.Peer.ipv4(egress.cidr), ec2.Port.tcp(egress.port), `${RULE_PREFIX}${egress.description}`);
    });
  }
}

const IPV4_CIDR = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}\/(3[0-2]|[12]?\d)$/;

/** What a model endpoint's egress rule's description starts with (the rest is the setting's `description`). */
const RULE_PREFIX = 'Model endpoint: ';
/** EC2 takes a rule description of up to 255 characters of a-z A-Z 0-9, space and ._-:/()#,@[]+=&;{}!$*. */
const RULE_DESCRIPTION_MAX = 255 - RULE_PREFIX.length;
const RULE_DESCRIPTION = new RegExp(`^[A-Za-z0-9 ._\\-:/()#,@\\[\\]+=&;{}!$*]{1,${RULE_DESCRIPTION_MAX}}$`);

/**
 * Refuses a `modelEndpointEgress` entry the security group could not hold or that would undo its point: not an IPv4
 * CIDR, the whole internet (list the endpoints' own range), a port outside 1–65535 or 443 (always open), or a
 * description EC2 would refuse at deploy. Throws `Flywheel.ConfigurationError` naming the entry, at synth.
 *
 * @example
 * checkModelEndpointEgress({ cidr: '10.20.0.0/16', port: 8000, description: 'vLLM in the models VPC' }, 'modelEndpointEgress[0]');
 */
export function checkModelEndpointEgress(egress: ModelEndpointEgress, field: string): void {
  const fail = (message: string) => {
    throw new ConfigurationError(`${field}: ${message}`);
  };
  if (!IPV4_CIDR.test(egress.cidr)) fail(`cidr "${egress.cidr}" is not an IPv4 CIDR like 10.20.0.0/16`);
  if (egress.cidr.endsWith('/0')) fail(`cidr ${egress.cidr} opens port ${egress.port} to the whole internet; list the endpoints' own range`);
  if (!Number.isInteger(egress.port) || egress.port < 1 || egress.port > 65535) fail(`port ${egress.port} is not a TCP port (1–65535)`);
  if (egress.port === 443) fail('port 443 is always open to every address; list only other ports');
  if (!RULE_DESCRIPTION.test(egress.description)) {
    fail(`description "${egress.description}" is empty, over ${RULE_DESCRIPTION_MAX} characters, or has characters a security group rule refuses (allowed: letters, digits, spaces and ._-:/()#,@[]+=&;{}!$*)`);
  }
}
