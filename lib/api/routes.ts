import { makeGetFeedbackHandler } from '../feedback/http/get-feedback.ts';
import { makeListFeedbackHandler } from '../feedback/http/list-feedback.ts';
import { makePostFeedbackHandler } from '../feedback/http/post-feedback.ts';
import { makePostReportHandler } from '../feedback/http/post-report.ts';
import { makeGetOpenApiHandler } from './http/get-openapi.ts';
import type { RouteSpec } from './route.ts';

/**
 * The single route table: the API stack makes API Gateway methods from it, the local server and the Lambda
 * entries dispatch on it (`makeDispatcher`), and the OpenAPI document describes it.
 */
export const routes: RouteSpec[] = [
  { method: 'POST', path: '/v1/feedback', operationId: 'postFeedback', lambda: 'feedback/ingest', apiKeyRequired: true, make: makePostFeedbackHandler },
  { method: 'POST', path: '/v1/reports', operationId: 'postReport', lambda: 'feedback/ingest', apiKeyRequired: true, make: makePostReportHandler },
  { method: 'GET', path: '/v1/feedback/{eventId}', operationId: 'getFeedback', lambda: 'feedback/query', apiKeyRequired: true, make: makeGetFeedbackHandler },
  { method: 'GET', path: '/v1/feedback', operationId: 'listFeedback', lambda: 'feedback/query', apiKeyRequired: true, make: makeListFeedbackHandler },
  { method: 'GET', path: '/v1/openapi.json', operationId: 'getOpenApi', lambda: 'api/openapi', apiKeyRequired: true, make: () => makeGetOpenApiHandler(routes) },
];

/** The routes one Lambda function serves (`functions/<lambda>.ts`). */
export function routesOf(lambda: string): RouteSpec[] {
  return routes.filter((r) => r.lambda === lambda);
}
