/**
 * OpenAPI descriptions of the experiment lifecycle and assignment routes, by operationId, from the schemas that
 * validate them (merged into `OPERATIONS` of `lib/api/openapi.ts`).
 */
import { z } from 'zod';
import { bodyErrors, errorDoc, READ_ERRORS, type OperationDoc } from '../../api/operation-docs.ts';
import { AssignmentRequest, AssignmentSchema, ExperimentChangeSchema, ExperimentInput, ExperimentRecordSchema, StopInput } from '../schemas.ts';
import { ASSIGNMENT_BODY_LIMIT } from './assignment-handler.ts';
import { EXPERIMENT_BODY_LIMIT, ExperimentParams, ListExperimentsQuery, STOP_BODY_LIMIT } from './lifecycle-handlers.ts';

const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } });
const Created = z.object({ experiment: ExperimentRecordSchema, created: z.boolean() });
const Changed = z.object({ experiment: ExperimentRecordSchema, changed: z.boolean() });
const NOT_FOUND = errorDoc('No experiment with this id.');

export const LIFECYCLE_OPERATIONS: Record<string, OperationDoc> = {
  createExperiment: {
    summary: 'Define an A/B test between checkpoints: arms and weights, unit, metrics, power (planned sample), stopping rule, holdout, ramp; stored as a draft',
    request: { body: { required: true, content: { 'application/json': { schema: ExperimentInput } } } },
    responses: {
      201: json(Created, 'Created as a draft; start it with POST /v1/experiments/{id}/start.'),
      200: json(Created, 'The same definition existed already under this id (created: false).'),
      409: errorDoc('Another definition exists under this id.'),
      ...READ_ERRORS,
      400: errorDoc('Invalid definition: `issues` names every field (unknown metric names `metrics.…`, unknown checkpoints `arms[i].checkpoint`).'),
      ...bodyErrors(EXPERIMENT_BODY_LIMIT),
    },
  },
  listExperiments: {
    summary: 'Experiments, newest first, optionally of one status (draft, running, stopped, decided)',
    request: { query: ListExperimentsQuery },
    responses: { 200: json(z.object({ items: z.array(ExperimentRecordSchema), cursor: z.string().optional() }), 'A page; pass `cursor` for the next.'), ...READ_ERRORS },
  },
  getExperiment: {
    summary: 'One experiment: its definition and state, every change (who, what, when), and its newest analysis id',
    request: { params: ExperimentParams },
    responses: {
      200: json(z.object({ experiment: ExperimentRecordSchema, changes: z.array(ExperimentChangeSchema), lastAnalysisId: z.string().optional() }), 'The experiment.'),
      404: NOT_FOUND,
      ...READ_ERRORS,
    },
  },
  startExperiment: {
    summary: 'Start a draft: it runs at its first ramp step',
    request: { params: ExperimentParams },
    responses: {
      200: json(Changed, 'Running (changed: false when it was running already).'),
      404: NOT_FOUND,
      409: errorDoc('The experiment is stopped or decided: it cannot start again.'),
      ...READ_ERRORS,
    },
  },
  stopExperiment: {
    summary: 'Stop the experiment, or one arm (its units get the control; every other unit keeps its arm)',
    request: { params: ExperimentParams, body: { required: true, content: { 'application/json': { schema: StopInput } } } },
    responses: {
      200: json(Changed, 'Stopped (changed: false when it or the arm was stopped already).'),
      404: NOT_FOUND,
      409: errorDoc('A decided experiment, or an arm of one that is not running.'),
      ...READ_ERRORS,
      400: errorDoc('Invalid request: `issues` names the field (`arm`: unknown, or the control arm, which is stopped only with the experiment).'),
      ...bodyErrors(STOP_BODY_LIMIT),
    },
  },
  assignUnits: {
    summary: 'The arm of each unit in each running experiment (deterministic GrowthBook v2 hashing, answered from memory)',
    request: { body: { required: true, content: { 'application/json': { schema: AssignmentRequest } } } },
    responses: {
      200: json(z.object({ assignments: z.array(AssignmentSchema) }), 'One assignment per unit and running experiment; log an exposure when `logExposure` is true and the arm served.'),
      ...READ_ERRORS,
      ...bodyErrors(ASSIGNMENT_BODY_LIMIT),
    },
  },
};
