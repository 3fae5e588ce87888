import { ArnFormat, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigateway';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { HttpErrorNames } from '../api/http-errors.ts';
import type { StageSettings } from '../config/stages.ts';
import { retentionDays } from './flywheel-function.ts';

export interface ApiWafProps {
  settings: StageSettings;
  /** The REST API stage the web ACL fronts. */
  stage: apigw.Stage;
}

/** The rules of the web ACL, in evaluation order (priority = index). */
export const API_WAF_RULES = ['RateLimitPerIp', 'RateLimitKeylessPerIp', 'AwsCommonRules', 'AwsKnownBadInputs'] as const;

/**
 * Rules of the AWS managed groups that inspect the request body, counted rather than blocked. The API's bodies are
 * feedback events and trajectories: model output full of code, shell lines, paths and markup, up to the handlers'
 * size limit (far over the group's 8 KB `SizeRestrictions_BODY`). These rules would refuse legitimate requests; the
 * handlers validate bodies against their schemas, and the rules still inspect headers, URI and query string.
 */
export const COUNTED_BODY_RULES = {
  AWSManagedRulesCommonRuleSet: ['SizeRestrictions_BODY', 'CrossSiteScripting_BODY', 'GenericLFI_BODY', 'GenericRFI_BODY', 'EC2MetaDataSSRF_BODY'],
  AWSManagedRulesKnownBadInputsRuleSet: ['Log4JRCE_BODY', 'JavaDeserializationRCE_BODY'],
} as const;

/** The response a rate-limited client gets: the API's error shape, 429, and when to come back (WAF's window moves every 30 s or so). */
const THROTTLED_BODY = 'Throttled';
const RETRY_AFTER_SECONDS = 60;

/**
 * A regional WAF web ACL in front of the REST API stage:
 *
 * - `RateLimitPerIp`: requests per client IP per 5 minutes (`api.waf.requestsPerIpPer5Minutes`), keyed or not;
 * - `RateLimitKeylessPerIp`: a much lower limit on requests with neither an `x-api-key` nor an `Authorization` header
 *   (API Gateway refuses them anyway: this bounds what a scanner or flood costs);
 * - AWS managed rules: the common rule set and known bad inputs, with their body rules counted (`COUNTED_BODY_RULES`).
 *
 * Rate-limited requests get 429 `{ "error": "Flywheel.Throttled", … }` with `Retry-After`, as API Gateway's throttling
 * does. Every request is logged to CloudWatch (`aws-waf-logs-…`, the stage's retention) with the `x-api-key` and
 * `authorization` headers redacted; CloudWatch metrics and sampled requests per rule.
 */
export class ApiWaf extends Construct {
  readonly webAcl: wafv2.CfnWebACL;
  readonly logs: LogGroup;

  constructor(scope: Construct, id: string, props: ApiWafProps) {
    super(scope, id);
    const { settings } = props;
    const { waf } = settings.api;
    const metricPrefix = `flywheel-${settings.stage}-api`;
    const visibility = (name: string): wafv2.CfnWebACL.VisibilityConfigProperty => ({
      cloudWatchMetricsEnabled: true,
      metricName: `${metricPrefix}-${name}`,
      sampledRequestsEnabled: true,
    });
    const throttled: wafv2.CfnWebACL.RuleActionProperty = {
      block: {
        customResponse: {
          responseCode: 429,
          customResponseBodyKey: THROTTLED_BODY,
          responseHeaders: [{ name: 'Retry-After', value: String(RETRY_AFTER_SECONDS) }],
        },
      },
    };
    const headerAbsent = (name: string): wafv2.CfnWebACL.StatementProperty => ({
      notStatement: {
        statement: {
          sizeConstraintStatement: {
            fieldToMatch: { singleHeader: { Name: name } },
            comparisonOperator: 'GT',
            size: 0,
            textTransformations: [{ priority: 0, type: 'NONE' }],
          },
        },
      },
    });
    const managed = (name: keyof typeof COUNTED_BODY_RULES): wafv2.CfnWebACL.StatementProperty => ({
      managedRuleGroupStatement: {
        vendorName: 'AWS',
        name,
        ruleActionOverrides: COUNTED_BODY_RULES[name].map((rule) => ({ name: rule, actionToUse: { count: {} } })),
      },
    });
    const rules: Record<(typeof API_WAF_RULES)[number], Omit<wafv2.CfnWebACL.RuleProperty, 'name' | 'priority' | 'visibilityConfig'>> = {
      RateLimitPerIp: {
        action: throttled,
        statement: { rateBasedStatement: { aggregateKeyType: 'IP', limit: waf.requestsPerIpPer5Minutes, evaluationWindowSec: 300 } },
      },
      RateLimitKeylessPerIp: {
        action: throttled,
        statement: {
          rateBasedStatement: {
            aggregateKeyType: 'IP',
            limit: waf.keylessRequestsPerIpPer5Minutes,
            evaluationWindowSec: 300,
            scopeDownStatement: { andStatement: { statements: [headerAbsent('x-api-key'), headerAbsent('authorization')] } },
          },
        },
      },
      AwsCommonRules: { overrideAction: { none: {} }, statement: managed('AWSManagedRulesCommonRuleSet') },
      AwsKnownBadInputs: { overrideAction: { none: {} }, statement: managed('AWSManagedRulesKnownBadInputsRuleSet') },
    };

    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      name: `flywheel-${settings.stage}-api`,
      description: `Flywheel ${settings.stage} API: rate limits per client IP, AWS managed common rules and known bad inputs`,
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      customResponseBodies: {
        [THROTTLED_BODY]: {
          contentType: 'APPLICATION_JSON',
          content: JSON.stringify({ error: HttpErrorNames.throttled, message: `Too many requests from this address: retry after ${RETRY_AFTER_SECONDS} s` }),
        },
      },
      visibilityConfig: visibility('acl'),
      rules: API_WAF_RULES.map((name, priority) => ({ name, priority, visibilityConfig: visibility(name), ...rules[name] })),
    });

    new wafv2.CfnWebACLAssociation(this, 'Association', {
      resourceArn: props.stage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });

    // WAF delivers to CloudWatch Logs only into groups named aws-waf-logs-*.
    this.logs = new LogGroup(this, 'Logs', {
      logGroupName: `aws-waf-logs-flywheel-${settings.stage}-api`,
      retention: retentionDays(settings.logRetentionDays),
      removalPolicy: settings.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    new wafv2.CfnLoggingConfiguration(this, 'Logging', {
      resourceArn: this.webAcl.attrArn,
      // The log group's ARN without the `:*` suffix that LogGroup.logGroupArn carries: WAF refuses it.
      logDestinationConfigs: [Stack.of(this).formatArn({ service: 'logs', resource: 'log-group', resourceName: this.logs.logGroupName, arnFormat: ArnFormat.COLON_RESOURCE_NAME })],
      redactedFields: [{ singleHeader: { Name: 'x-api-key' } }, { singleHeader: { Name: 'authorization' } }],
    });
  }
}
