/**
 * OpenAPI descriptions of the registry routes, by operationId, from the schemas that validate them
 * (merged into `OPERATIONS` of `lib/api/openapi.ts`).
 */
import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { ErrorBody } from '../../feedback/schemas.ts';
import { CheckpointInput, CheckpointPage, ListCheckpointsQuery, ListResultsQuery, ListSuitesQuery, RegisterCheckpointResult, ResultList, SuiteList } from '../schemas.ts';
import { CHECKPOINT_BODY_LIMIT } from './post-checkpoint.ts';

export type OperationDoc = Omit<RouteConfig, 'method' | 'path' | 'operationId'>;

const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } });
export const errorDoc = (description: string) => json(ErrorBody, description);
export const READ_ERRORS: RouteConfig['responses'] = {
  400: errorDoc('Invalid query: `issues` lists every offending field.'),
  401: errorDoc('Missing API key (x-api-key header).'),
  403: errorDoc('Invalid API key.'),
  429: errorDoc('Throttled by the usage plan; retry after the Retry-After header.'),
};
export const bodyErrors = (limit: number): RouteConfig['responses'] => ({
  413: errorDoc(`Body over ${limit} bytes.`),
  415: errorDoc('Content-Type is not application/json.'),
});

export const REGISTRY_OPERATIONS: Record<string, OperationDoc> = {
  postCheckpoint: {
    summary: 'Register a checkpoint (publishes checkpoint.registered, which starts a sweep unless sweep is false)',
    request: { body: { required: true, content: { 'application/json': { schema: CheckpointInput } } } },
    responses: {
      201: json(RegisterCheckpointResult, 'Registered.'),
      200: json(RegisterCheckpointResult, 'Already registered with the same fields (an idempotent retry).'),
      ...READ_ERRORS,
      ...bodyErrors(CHECKPOINT_BODY_LIMIT),
    },
  },
  listCheckpoints: {
    summary: 'Registered checkpoints, newest first, all or by model',
    request: { query: ListCheckpointsQuery },
    responses: { 200: json(CheckpointPage, 'A page; pass `cursor` for the next.'), ...READ_ERRORS },
  },
  listSuites: {
    summary: 'Suites with version, visibility, status (active / saturated / retired) and useful life',
    request: { query: ListSuitesQuery },
    responses: { 200: json(SuiteList, 'Every suite, by id.'), ...READ_ERRORS },
  },
  listResults: {
    summary: 'Results per sweep × checkpoint × suite × mode, oldest first (time series)',
    request: { query: ListResultsQuery },
    responses: { 200: json(ResultList, 'Result rows.'), ...READ_ERRORS },
  },
};
