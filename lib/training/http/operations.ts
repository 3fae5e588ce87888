/**
 * OpenAPI descriptions of the training-run routes, by operationId, from the schemas that validate them (merged into
 * `OPERATIONS` of `lib/api/openapi.ts`); the decision routes have theirs in `decision-operations.ts`.
 */
import { z } from 'zod';
import { bodyErrors, errorDoc, READ_ERRORS, type OperationDoc } from '../../api/operation-docs.ts';
import { TrainingMetricsLineSchema, TrainingRunInputSchema, TrainingRunSchema } from '../schemas.ts';
import { ListTrainingRunsQuery, TRAINING_RUN_BODY_LIMIT, TrainingCurvesQuery, TrainingRunParams } from './training-run-handlers.ts';

const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } });
const Started = z.object({ run: TrainingRunSchema, created: z.boolean() });
const ADMIN_ONLY_TENANT = errorDoc('Invalid API key, a key without admin scope, or a key of a tenant other than the default one (runs execute for it only).');

export const TRAINING_OPERATIONS: Record<string, OperationDoc> = {
  postTrainingRun: {
    summary: 'Start a training run: build a dataset → train → register the checkpoint → sweep it → compare → propose an A/B test',
    request: { body: { required: true, content: { 'application/json': { schema: TrainingRunInputSchema } } } },
    responses: {
      201: json(Started, 'Started; follow it with GET /v1/training-runs/{runId}.'),
      200: json(Started, 'A run of this id existed already (created: false); nothing new was started.'),
      ...READ_ERRORS,
      403: ADMIN_ONLY_TENANT,
      ...bodyErrors(TRAINING_RUN_BODY_LIMIT),
    },
  },
  listTrainingRuns: {
    summary: 'Training runs, newest first, optionally of one status',
    request: { query: ListTrainingRunsQuery },
    responses: { 200: json(z.object({ items: z.array(TrainingRunSchema), cursor: z.string().optional() }), 'A page; pass `cursor` for the next.'), ...READ_ERRORS },
  },
  getTrainingRun: {
    summary: 'One training run: status, step, last heartbeat, dataset, checkpoint, sweep, comparison with the incumbent, proposal',
    request: { params: TrainingRunParams },
    responses: { 200: json(TrainingRunSchema, 'The run.'), 404: errorDoc('No training run with this id.'), ...READ_ERRORS },
  },
  getTrainingCurves: {
    summary: "A run's curves: the trainer's metrics per step (loss, each term, KL on the spans, locality KL, mismatch, tokens/s), as JSON or a PNG",
    request: { params: TrainingRunParams, query: TrainingCurvesQuery },
    responses: {
      200: {
        description: 'format=json: the metrics lines in step order; format=png: one panel per metric (send Accept: image/png).',
        content: {
          'application/json': { schema: z.object({ runId: z.string(), lines: z.array(TrainingMetricsLineSchema) }) },
          'image/png': { schema: z.string().meta({ format: 'binary' }) },
        },
      },
      404: errorDoc('No training run with this id.'),
      ...READ_ERRORS,
    },
  },
  stopTrainingRun: {
    summary: 'Stop a run: its execution and its trainer job; the run ends stopped and can be resumed',
    request: { params: TrainingRunParams },
    responses: { 200: json(TrainingRunSchema, 'The run, stopped (unchanged when it had ended already).'), 404: errorDoc('No training run with this id.'), ...READ_ERRORS, 403: ADMIN_ONLY_TENANT },
  },
  resumeTrainingRun: {
    summary: 'Resume a stopped or failed run: its execution starts again and the trainer continues from its last saved state',
    request: { params: TrainingRunParams },
    responses: {
      200: json(TrainingRunSchema, 'The run, queued again.'),
      404: errorDoc('No training run with this id.'),
      ...READ_ERRORS,
      400: errorDoc('The run is neither stopped nor failed (`issues` names `status`): nothing to resume.'),
      403: ADMIN_ONLY_TENANT,
    },
  },
};
