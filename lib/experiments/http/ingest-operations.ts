/**
 * OpenAPI descriptions of the experiments' ingest routes, by operationId (merged into `OPERATIONS` of
 * `lib/api/openapi.ts`).
 */
import { z } from 'zod';
import { BODY_LIMITS } from '../../api/http-api.ts';
import { bodyErrors, errorDoc, READ_ERRORS, type OperationDoc } from '../../api/operation-docs.ts';
import { ExposureIngestResult, MetricIngestResult } from '../ingest/ingest-online-events.ts';
import { ExposureBatchInput, ExposureInput, MetricBatchInput, MetricDefinitionInput, MetricEventInput } from '../schemas.ts';
import { METRIC_DEFINITION_BODY_LIMIT } from './ingest-handlers.ts';

const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } });

/** A stored definition: the request's fields, when it was first declared, and whether it is built in. */
const MetricDefinitionView = z
  .object({ name: z.string(), kind: z.enum(['binomial', 'mean', 'ratio']), direction: z.enum(['increase', 'decrease']), createdAt: z.string(), builtIn: z.boolean().optional() })
  .catchall(z.unknown())
  .openapi('MetricDefinition');

export const EXPERIMENT_INGEST_OPERATIONS: Record<string, OperationDoc> = {
  postMetrics: {
    summary: 'Send one online metric event (latency, tokens, cost, tool errors, time to accept, or a declared metric) or a batch of up to 500',
    request: { body: { required: true, content: { 'application/json': { schema: z.union([MetricEventInput, MetricBatchInput]) } } } },
    responses: {
      202: json(MetricIngestResult, 'Durable: every accepted item will be stored once (idempotent by metricEventId). Answers per item.'),
      ...READ_ERRORS,
      400: errorDoc('Invalid: `issues` lists every offending field (`metrics[3].value`); a batch whose every item was rejected answers per item too.'),
      ...bodyErrors(BODY_LIMITS.onlineEvents),
    },
  },
  postExposures: {
    summary: 'Log where a checkpoint served a unit in an experiment (one exposure or a batch of up to 500): the denominator of rates and the input of the sample-ratio check',
    request: { body: { required: true, content: { 'application/json': { schema: z.union([ExposureInput, ExposureBatchInput]) } } } },
    responses: {
      202: json(ExposureIngestResult, 'Durable: every accepted item will be stored once (idempotent by exposureId). Answers per item.'),
      ...READ_ERRORS,
      400: errorDoc('Invalid: `issues` lists every offending field (`exposures[0].unitType`).'),
      ...bodyErrors(BODY_LIMITS.onlineEvents),
    },
  },
  putMetricDefinition: {
    summary: 'Declare a metric (binomial, mean or ratio; which way is good); re-declaring replaces its words, direction and display, never its kind',
    request: { body: { required: true, content: { 'application/json': { schema: MetricDefinitionInput } } } },
    responses: {
      201: json(MetricDefinitionView, 'Declared.'),
      200: json(MetricDefinitionView, 'Already declared (the same, or replaced in place).'),
      409: errorDoc('A built-in metric has this name, or the metric is declared with another kind.'),
      ...READ_ERRORS,
      ...bodyErrors(METRIC_DEFINITION_BODY_LIMIT),
    },
  },
  listMetricDefinitions: {
    summary: 'Every metric an experiment can name: the built-ins, then the declared ones',
    responses: { 200: json(z.object({ items: z.array(MetricDefinitionView) }), 'The definitions.'), ...READ_ERRORS },
  },
};
