/**
 * OpenAPI descriptions of the decision-record routes, by operationId (merged into `OPERATIONS` of
 * `lib/api/openapi.ts`).
 */
import { z } from 'zod';
import { bodyErrors, errorDoc, READ_ERRORS, type OperationDoc } from '../../api/operation-docs.ts';
import { ExtractDecisionsInput, ExtractDecisionsResultSchema } from '../decisions/extract-decisions.ts';
import { ListDecisionsQuery } from '../decisions/list-decisions.ts';
import { DecisionRecordSchema } from '../schemas.ts';
import { DecisionParams, EXTRACT_DECISIONS_BODY_LIMIT } from './decision-handlers.ts';

const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } });

export const DECISIONS_OPERATIONS: Record<string, OperationDoc> = {
  listDecisions: {
    summary: 'Decision records (one bad decision of a rollout and its hint), newest first: of a run or an attempt, by status and hint class',
    request: { query: ListDecisionsQuery },
    responses: { 200: json(z.object({ items: z.array(DecisionRecordSchema), cursor: z.string().optional() }), 'A page (filters may leave it short); pass `cursor` for the next.'), ...READ_ERRORS },
  },
  getDecision: {
    summary: 'One decision record: trajectory, message, spans, hint class and text, insertion point, source, leakage check, lineage',
    request: { params: DecisionParams },
    responses: { 200: json(DecisionRecordSchema, 'The record.'), 404: errorDoc('No such decision record.'), ...READ_ERRORS },
  },
  extractDecisions: {
    summary: "Extract decision records from a run's attempts (harness events, judge criteria, a locator model) or from feedback events (a person's comment); each hint passes the leakage check or is stored rejected",
    request: { body: { required: true, content: { 'application/json': { schema: ExtractDecisionsInput } } } },
    responses: { 200: json(ExtractDecisionsResultSchema, 'Counts per source and status, the ids, and what was skipped and why.'), ...READ_ERRORS, ...bodyErrors(EXTRACT_DECISIONS_BODY_LIMIT) },
  },
};
