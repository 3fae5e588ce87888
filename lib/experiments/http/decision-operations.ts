/**
 * OpenAPI descriptions of the decision routes of experiments, by operationId (merged into `OPERATIONS` of
 * `lib/api/openapi.ts`).
 */
import { z } from 'zod';
import { bodyErrors, errorDoc, READ_ERRORS, type OperationDoc } from '../../api/operation-docs.ts';
import { DecideInput, ExperimentDecisionSchema, ExperimentRecordSchema } from '../schemas.ts';
import { DECIDE_BODY_LIMIT, DecideParams } from './decision-handlers.ts';

const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } });

export const DecideResultSchema = z
  .object({ experiment: ExperimentRecordSchema, decision: ExperimentDecisionSchema, changed: z.boolean().openapi({ description: 'False for a retry of the decision already taken.' }) })
  .openapi('DecideResult');

export const EXPERIMENT_DECISION_OPERATIONS: Record<string, OperationDoc> = {
  decideExperiment: {
    summary: "Decide a running or stopped experiment on its newest analysis: ship an arm (its checkpoint becomes the incumbent), roll back (the control stays), or extend (more days)",
    request: { params: DecideParams, body: { required: true, content: { 'application/json': { schema: DecideInput } } } },
    responses: {
      200: json(DecideResultSchema, 'Decided (or extended); `changed: false` for a retry.'),
      404: errorDoc('No such experiment.'),
      409: errorDoc('Not running or stopped, already decided otherwise, or no analysis yet.'),
      ...READ_ERRORS,
      ...bodyErrors(DECIDE_BODY_LIMIT),
    },
  },
};
