import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import {
  EventIdParams,
  FeedbackBatchInput,
  FeedbackEventInput,
  FeedbackPage,
  FeedbackRecordView,
  IngestResult,
  ListFeedbackQuery,
  ReportAccepted,
  ReportInput,
} from '../feedback/schemas.ts';
import { ErrorBody } from '../shared/error-body.ts';
import { REGISTRY_OPERATIONS } from '../registry/http/operations.ts';
import { SWEEP_OPERATIONS } from '../sweeps/http/operations.ts';
import { MODES_OPERATIONS } from '../modes/http/operations.ts';
import { JUDGES_OPERATIONS } from '../judges/http/operations.ts';
import { ANNOTATION_OPERATIONS } from '../judges/http/annotation-operations.ts';
import { TRAINING_OPERATIONS } from '../training/http/operations.ts';
import { DECISIONS_OPERATIONS } from '../training/http/decision-operations.ts';
// import experiments: ingest
import { EXPERIMENT_INGEST_OPERATIONS } from '../experiments/http/ingest-operations.ts';
// import experiments: lifecycle and assignment
import { LIFECYCLE_OPERATIONS } from '../experiments/http/lifecycle-operations.ts';
// import experiments: analysis
import { ANALYSIS_OPERATIONS } from '../experiments/http/analysis-operations.ts';
// import experiments: decisions and incumbent
import { EXPERIMENT_DECISION_OPERATIONS } from '../experiments/http/decision-operations.ts';
// import console: files
import { CONSOLE_OPERATIONS } from '../console/http/console-operations.ts';
// import console: data
import { ATTEMPT_READ_OPERATIONS } from '../registry/http/attempt-operations.ts';
import { SWEEP_LIST_OPERATIONS } from '../sweeps/http/list-operations.ts';
import { OVERVIEW_OPERATIONS } from '../overview/http/overview-operations.ts';
import { TIMELINE_OPERATIONS } from '../modes/http/timeline-operations.ts';
// import people: slack
import { SLACK_OPERATIONS } from '../people/slack/http/slack-operations.ts';
// import people: notices
import { NOTICE_OPERATIONS } from '../people/notices/http/notice-operations.ts';
// import compute: usage and budgets
import { COMPUTE_OPERATIONS } from '../compute/http/compute-operations.ts';
// import cli: registry reads
import { CHECKPOINT_READ_OPERATIONS } from '../registry/http/checkpoint-operations.ts';
import { SWEEP_PROGRESS_OPERATIONS } from '../sweeps/http/progress-operations.ts';
import { BODY_LIMITS } from './http-api.ts';
import type { RouteSpec } from './route.ts';

type Operation = Omit<RouteConfig, 'method' | 'path' | 'operationId' | 'responses'> & {
  responses: RouteConfig['responses'];
};

const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } });
const error = (description: string) => json(ErrorBody, description);

/** The error answers every route can give (API Gateway gives 401/403/429 itself). */
const COMMON_ERRORS: RouteConfig['responses'] = {
  400: error('Invalid request: `issues` lists every offending field with its path and reason.'),
  401: error('Missing API key (x-api-key header).'),
  403: error('Invalid API key.'),
  429: {
    ...error('Throttled by the usage plan; retry after the Retry-After header.'),
    headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'Seconds to wait.' } },
  },
};
const BODY_ERRORS = (limit: number): RouteConfig['responses'] => ({
  413: error(`Body over ${limit} bytes.`),
  415: error('Content-Type is not application/json.'),
});

/**
 * Request and response documentation of each operation, by operationId. Every route of the route table must have
 * one: `buildOpenApiDocument` throws otherwise, so a new route cannot ship undocumented.
 */
export const OPERATIONS: Record<string, Operation> = {
  postFeedback: {
    summary: 'Send one feedback event or a batch of up to 500',
    request: {
      body: {
        required: true,
        content: { 'application/json': { schema: z.union([FeedbackEventInput, FeedbackBatchInput]) } },
      },
    },
    responses: {
      202: json(IngestResult, 'Durable: every accepted item will be stored. Answers per item.'),
      ...COMMON_ERRORS,
      ...BODY_ERRORS(BODY_LIMITS.feedback),
    },
  },
  postReport: {
    summary: 'Send an internal or automated report',
    request: { body: { required: true, content: { 'application/json': { schema: ReportInput } } } },
    responses: { 202: json(ReportAccepted, 'Durable.'), ...COMMON_ERRORS, ...BODY_ERRORS(BODY_LIMITS.reports) },
  },
  getFeedback: {
    summary: 'One stored feedback event with its vote history',
    request: { params: EventIdParams },
    responses: { 200: json(FeedbackRecordView, 'The event.'), 404: error('No event with this id (yet).'), ...COMMON_ERRORS },
  },
  listFeedback: {
    summary: 'Stored feedback, newest first, by model or by day',
    request: { query: ListFeedbackQuery },
    responses: { 200: json(FeedbackPage, 'A page; pass `cursor` for the next.'), ...COMMON_ERRORS },
  },
  ...REGISTRY_OPERATIONS,
  ...SWEEP_OPERATIONS,
  ...MODES_OPERATIONS,
  ...JUDGES_OPERATIONS,
  ...ANNOTATION_OPERATIONS,
  ...TRAINING_OPERATIONS,
  ...DECISIONS_OPERATIONS,
  // spread experiments: ingest
  ...EXPERIMENT_INGEST_OPERATIONS,
  // spread experiments: lifecycle and assignment
  ...LIFECYCLE_OPERATIONS,
  // spread experiments: analysis
  ...ANALYSIS_OPERATIONS,
  // spread experiments: decisions and incumbent
  ...EXPERIMENT_DECISION_OPERATIONS,
  // spread console: files
  ...CONSOLE_OPERATIONS,
  // spread console: data
  ...ATTEMPT_READ_OPERATIONS,
  ...SWEEP_LIST_OPERATIONS,
  ...OVERVIEW_OPERATIONS,
  ...TIMELINE_OPERATIONS,
  // spread people: slack
  ...SLACK_OPERATIONS,
  // spread people: notices
  ...NOTICE_OPERATIONS,
  // spread compute: usage and budgets
  ...COMPUTE_OPERATIONS,
  // spread cli: registry reads
  ...CHECKPOINT_READ_OPERATIONS,
  ...SWEEP_PROGRESS_OPERATIONS,
  getOpenApi: {
    summary: 'This document',
    responses: { 200: { description: 'The OpenAPI 3.1 document.', content: { 'application/json': { schema: { type: 'object' } } } }, ...COMMON_ERRORS },
  },
};

/**
 * Builds the OpenAPI 3.1 document of the route table from the same zod schemas that validate requests, with the
 * `x-api-key` security scheme on every route that needs a key.
 *
 * @example
 * const doc = buildOpenApiDocument(routes); // doc.paths['/v1/feedback'].post.requestBody …
 */
export function buildOpenApiDocument(routes: readonly RouteSpec[]): ReturnType<OpenApiGeneratorV31['generateDocument']> {
  const registry = new OpenAPIRegistry();
  const apiKey = registry.registerComponent('securitySchemes', 'ApiKey', {
    type: 'apiKey',
    in: 'header',
    name: 'x-api-key',
    description:
      'An API key (`flywheel keys create --tenant t --scopes …`): its tenant is the data it reaches, its scopes the routes it may call (ingest: post feedback and reports; read; admin: suites, checkpoints, sweeps, labels and approvals, implies read). On AWS it is also an API Gateway key of the stage usage plan. The local runtime prints its own (default tenant, every scope) on start.',
  });
  for (const route of routes) {
    const op = OPERATIONS[route.operationId];
    if (!op) throw new Error(`Route ${route.method} ${route.path} (${route.operationId}) has no OpenAPI description in OPERATIONS`);
    registry.registerPath({
      ...op,
      method: route.method.toLowerCase() as RouteConfig['method'],
      path: route.path,
      operationId: route.operationId,
      ...(route.apiKeyRequired ? { security: [{ [apiKey.name]: [] }] } : {}),
      description: `${op.description ? `${op.description}\n\n` : ''}${route.apiKeyRequired ? `Needs a key with the \`${route.scope}\` scope${route.scope === 'read' ? ' (or admin)' : ''}.` : 'Open: no key (the handler checks its caller itself, or serves only public files).'}`,
      'x-flywheel-scope': route.scope,
    } as RouteConfig);
  }
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Flywheel API',
      version: '1.0.0',
      description: 'Feedback, reports and online signal for the improvement loop of a coding agent.',
    },
  });
}
