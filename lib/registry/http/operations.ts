/**
 * OpenAPI descriptions of the registry routes, by operationId, from the schemas that validate them
 * (merged into `OPERATIONS` of `lib/api/openapi.ts`).
 */
import { z } from 'zod';
import { bodyErrors, errorDoc, READ_ERRORS, type OperationDoc } from '../../api/operation-docs.ts';
import {
  CheckpointInput,
  CheckpointPage,
  GetSuiteQuery,
  ListCheckpointsQuery,
  ListResultsQuery,
  ListSuitesQuery,
  RegisterCheckpointResult,
  RegisterSuiteResult,
  ResultList,
  RetireSuiteInput,
  RetireSuiteResult,
  SuiteDetailView,
  SuiteIdParams,
  SuiteInput,
  SuiteList,
} from '../schemas.ts';
import { CHECKPOINT_BODY_LIMIT } from './post-checkpoint.ts';
import { SUITE_BODY_LIMIT } from './post-suite.ts';
import { RETIRE_BODY_LIMIT } from './retire-suite.ts';

const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } });

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
  postSuite: {
    summary: 'Register a suite, or a new version of one (omit version: a changed task list gets the next version)',
    request: { body: { required: true, content: { 'application/json': { schema: SuiteInput } } } },
    responses: {
      201: json(RegisterSuiteResult, 'Registered: a new suite, or a new version (previousVersion says which it replaced).'),
      200: json(RegisterSuiteResult, 'This version was already registered with the same content (an idempotent retry).'),
      ...READ_ERRORS,
      ...bodyErrors(SUITE_BODY_LIMIT),
    },
  },
  getSuite: {
    summary: 'One suite: status, useful life (creation → saturation) and its best strict score over time',
    request: { params: SuiteIdParams, query: GetSuiteQuery },
    responses: { 200: json(SuiteDetailView, 'The suite, without its task ids.'), 404: errorDoc('No suite with this id.'), ...READ_ERRORS },
  },
  retireSuite: {
    summary: 'Retire a suite (sweeps leave it out and refuse it by name); idempotent, publishes suite.retired',
    request: { params: SuiteIdParams, body: { required: true, content: { 'application/json': { schema: RetireSuiteInput } } } },
    responses: {
      200: json(RetireSuiteResult, 'Retired (changed: false when it already was; the first retirement is kept).'),
      404: errorDoc('No suite with this id.'),
      409: errorDoc('A newer version was registered meanwhile; read it again.'),
      ...READ_ERRORS,
      ...bodyErrors(RETIRE_BODY_LIMIT),
    },
  },
  listResults: {
    summary: 'Results per sweep × checkpoint × suite × mode, oldest first (time series)',
    request: { query: ListResultsQuery },
    responses: { 200: json(ResultList, 'Result rows.'), ...READ_ERRORS },
  },
  getIncumbent: {
    summary: 'The incumbent: the checkpoint sweeps compare new checkpoints against and experiments take as control (set when an experiment ships)',
    responses: {
      200: json(
        z.object({ checkpoint: z.string(), since: z.string().openapi({ description: 'When it became the incumbent.' }), experimentId: z.string().optional().openapi({ description: 'The experiment that shipped it.' }) }).openapi('Incumbent'),
        'The incumbent.',
      ),
      404: errorDoc('No incumbent yet.'),
      ...READ_ERRORS,
    },
  },
};
