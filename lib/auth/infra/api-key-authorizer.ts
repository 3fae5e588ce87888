import { Duration, Validations } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import type { StageSettings } from '../../config/stages.ts';
import { FlywheelFunction } from '../../constructs/flywheel-function.ts';
import type { RouteTableApi } from '../../constructs/route-table-api.ts';
import type { RecordsTable } from '../../constructs/records-table.ts';
import { TASK_SOURCES_ENV } from '../../registry/task-sources.ts';

/** How long API Gateway keeps an authorizer answer per key: also how long a revoked key may still pass. */
export const AUTHORIZER_CACHE_TTL = Duration.minutes(5);

export interface ApiKeyAuthorizerProps {
  settings: StageSettings;
  api: RouteTableApi;
  records: RecordsTable;
  environment: Record<string, string>;
  /** Where its error alarm goes, like every API function's. */
  alarmTopic: ITopic;
}

/**
 * Puts the Lambda REQUEST authorizer (`functions/api/authorizer.ts`: key → tenant and scopes, read-only on the
 * records table) in front of every method of the route table API, cached by the `x-api-key` header. API keys stay
 * required (key source HEADER, not AUTHORIZER): the usage plan throttles each key as before, with no usage-plan key
 * value for the authorizer to hold and return; the authorizer adds what API Gateway keys cannot say (tenant, scopes,
 * revocation), and the handlers read it from the authorizer context. A request needs both. `-c taskSources=<patterns>` sets the git remotes tasks registered
 * through the API may use (FLYWHEEL_TASK_SOURCES) on the route functions.
 *
 * @example
 * addApiKeyAuthorizer(this, { settings, api: this.api, records: data.records, environment, alarmTopic });
 */
export function addApiKeyAuthorizer(scope: Construct, props: ApiKeyAuthorizerProps): FlywheelFunction {
  const fn = new FlywheelFunction(scope, 'ApiAuthorizer', { lambda: 'api/authorizer', settings: props.settings, environment: props.environment });
  fn.readRecords(props.records);
  fn.alarmOnErrors(props.alarmTopic, props.settings.alarms.handlerErrorThreshold);
  const authorizer = new apigw.RequestAuthorizer(scope, 'ApiKeyAuthorizer', {
    handler: fn.fn,
    identitySources: [apigw.IdentitySource.header('x-api-key')],
    resultsCacheTtl: AUTHORIZER_CACHE_TTL,
  });
  authorizer._attachToApi(props.api.api);
  for (const method of props.api.api.methods) {
    const cfn = method.node.defaultChild as apigw.CfnMethod;
    if (cfn.apiKeyRequired !== true) {
      // An open route of the table (the console's static files, Slack's requests): no key can be sent, so its
      // handler checks its caller itself (Slack's request signature) or serves nothing but public files.
      Validations.of(method).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason: 'Open by design: the console files are public code with no data; Slack requests are verified by their signing secret in the handler.',
      });
      continue;
    }
    cfn.authorizationType = apigw.AuthorizationType.CUSTOM;
    cfn.authorizerId = authorizer.authorizerId;
  }
  const taskSources = scope.node.tryGetContext('taskSources') as string | undefined;
  if (taskSources) for (const f of props.api.functions.values()) f.fn.addEnvironment(TASK_SOURCES_ENV, taskSources);
  return fn;
}
