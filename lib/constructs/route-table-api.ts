import { Size, Validations } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { HttpErrorNames } from '../api/http-errors.ts';
import type { RouteSpec } from '../api/route.ts';
import { AuthErrorNames } from '../auth/forbidden-error.ts';
import type { StageSettings } from '../config/stages.ts';
import type { FlywheelFunction } from './flywheel-function.ts';

export interface RouteTableApiProps {
  settings: StageSettings;
  routes: readonly RouteSpec[];
  /** The function that serves `lambda` (called once per distinct name). */
  functionFor: (lambda: string) => FlywheelFunction;
  accessLogs: ILogGroup;
}

/** How long a throttled or over-quota client should wait, in seconds. */
const RETRY_AFTER_THROTTLED_SECONDS = 1;
const RETRY_AFTER_QUOTA_SECONDS = 3600;

/**
 * A Regional REST API built from the route table: one resource and method per route, one Lambda proxy integration per
 * function, API keys under one usage plan with the stage's rate, burst and quota. Request validation is the handlers'
 * (they name every bad field); API Gateway's own errors answer JSON in the handlers' shape `{ error, message }`.
 */
export class RouteTableApi extends Construct {
  readonly api: apigw.RestApi;
  readonly usagePlan: apigw.UsagePlan;
  readonly functions: ReadonlyMap<string, FlywheelFunction>;

  constructor(scope: Construct, id: string, props: RouteTableApiProps) {
    super(scope, id);
    const { settings } = props;
    const { rateLimit, burstLimit, dailyQuota } = settings.api;

    this.api = new apigw.RestApi(this, 'Api', {
      restApiName: `flywheel-${settings.stage}`,
      description: `Flywheel feedback API (${settings.stage})`,
      endpointConfiguration: { types: [apigw.EndpointType.REGIONAL] },
      apiKeySourceType: apigw.ApiKeySourceType.HEADER,
      // A handler's base64 PNG (a training run's curves) goes out as bytes to a client that accepts image/png.
      binaryMediaTypes: ['image/png'],
      // Answers over 1 KiB are gzipped for clients that accept it: the console's script (about 700 KB) and long lists.
      minCompressionSize: Size.kibibytes(1),
      // Execution logs need the account-level CloudWatch role.
      cloudWatchRole: true,
      deployOptions: {
        stageName: settings.stage,
        accessLogDestination: new apigw.LogGroupLogDestination(props.accessLogs),
        accessLogFormat: apigw.AccessLogFormat.custom(
          JSON.stringify({
            requestId: apigw.AccessLogField.contextRequestId(),
            requestTime: apigw.AccessLogField.contextRequestTime(),
            ip: apigw.AccessLogField.contextIdentitySourceIp(),
            apiKeyId: apigw.AccessLogField.contextIdentityApiKeyId(),
            method: apigw.AccessLogField.contextHttpMethod(),
            resourcePath: apigw.AccessLogField.contextResourcePath(),
            status: apigw.AccessLogField.contextStatus(),
            responseLength: apigw.AccessLogField.contextResponseLength(),
            responseLatency: apigw.AccessLogField.contextResponseLatency(),
            integrationLatency: apigw.AccessLogField.contextIntegrationLatency(),
            errorType: apigw.AccessLogField.contextErrorResponseType(),
            error: apigw.AccessLogField.contextErrorMessage(),
          }),
        ),
        loggingLevel: apigw.MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        metricsEnabled: true,
        tracingEnabled: true,
        throttlingRateLimit: rateLimit,
        throttlingBurstLimit: burstLimit,
      },
    });
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-APIG2',
      reason:
        'Validation is the handlers\': they check size (413), content type (415) and the zod schema, and list every offending field (400), which an API Gateway model cannot.',
    });
    // The stage's web ACL (AwsSolutions-APIG3) is the API stack's ApiWaf (lib/constructs/api-waf.ts).
    const cloudWatchRole = this.api.node.tryFindChild('CloudWatchRole');
    if (cloudWatchRole) {
      Validations.of(cloudWatchRole).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason: 'The AWS-maintained policy made for exactly this role: API Gateway pushing execution logs to CloudWatch.',
      });
    }

    this.addGatewayResponses();

    const functions = new Map<string, FlywheelFunction>();
    const integrations = new Map<string, apigw.LambdaIntegration>();
    for (const route of props.routes) {
      let integration = integrations.get(route.lambda);
      if (!integration) {
        const fn = props.functionFor(route.lambda);
        functions.set(route.lambda, fn);
        integration = new apigw.LambdaIntegration(fn.fn, { allowTestInvoke: false });
        integrations.set(route.lambda, integration);
      }
      const method = this.api.root.resourceForPath(route.path).addMethod(route.method, integration, {
        apiKeyRequired: route.apiKeyRequired,
        operationName: route.operationId,
      });
      Validations.of(method).acknowledge(
        {
          id: 'AwsSolutions-COG4',
          reason: 'Callers are services holding API keys, not Cognito users.',
        },
      );
    }
    this.functions = functions;

    this.usagePlan = this.api.addUsagePlan('UsagePlan', {
      name: `flywheel-${settings.stage}`,
      description: 'Product clients: one API key per team (aws apigateway create-usage-plan-key)',
      throttle: { rateLimit, burstLimit },
      ...(dailyQuota > 0 ? { quota: { limit: dailyQuota, period: apigw.Period.DAY } } : {}),
      apiStages: [{ api: this.api, stage: this.api.deploymentStage }],
    });
  }

  private addGatewayResponses(): void {
    const json = (error: string, message = '$context.error.messageString') => ({
      'application/json': `{"error":"${error}","message":${message},"requestId":"$context.requestId"}`,
    });
    const responses: Array<[string, apigw.ResponseType, string, string, Record<string, string>?]> = [
      ['Throttled', apigw.ResponseType.THROTTLED, '429', HttpErrorNames.throttled, { 'Retry-After': `'${RETRY_AFTER_THROTTLED_SECONDS}'` }],
      ['QuotaExceeded', apigw.ResponseType.QUOTA_EXCEEDED, '429', HttpErrorNames.throttled, { 'Retry-After': `'${RETRY_AFTER_QUOTA_SECONDS}'` }],
      ['ApiKey', apigw.ResponseType.INVALID_API_KEY, '403', AuthErrorNames.forbidden],
      ['MissingAuthenticationToken', apigw.ResponseType.MISSING_AUTHENTICATION_TOKEN, '403', AuthErrorNames.forbidden],
      ['RequestTooLarge', apigw.ResponseType.REQUEST_TOO_LARGE, '413', HttpErrorNames.payloadTooLarge],
      ['Default4xx', apigw.ResponseType.DEFAULT_4XX, '', HttpErrorNames.gateway],
      ['Default5xx', apigw.ResponseType.DEFAULT_5XX, '', HttpErrorNames.gateway],
    ];
    for (const [id, type, statusCode, error, headers] of responses) {
      this.api.addGatewayResponse(id, {
        type,
        ...(statusCode ? { statusCode } : {}),
        responseHeaders: { 'Content-Type': "'application/json'", ...headers },
        templates: json(error),
      });
    }
  }
}
