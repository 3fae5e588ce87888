/**
 * OpenAPI descriptions of the compute accounting routes, by operationId, from the schemas that validate them (merged
 * into `OPERATIONS` of `lib/api/openapi.ts`).
 */
import { z } from 'zod';
import { bodyErrors, errorDoc, READ_ERRORS, type OperationDoc } from '../../api/operation-docs.ts';
import { BudgetStatusSchema, ComputeBudgetSchema, ComputeUsageAnswer, GetComputeUsageQuery, JobsPage, ListJobsQuery, PutComputeBudgetInput } from '../schemas.ts';
import { BUDGET_BODY_LIMIT } from './compute-handlers.ts';

const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } });

export const COMPUTE_OPERATIONS: Record<string, OperationDoc> = {
  listJobs: {
    summary: 'Batch and local jobs as compute accounting saw them (newest first): category, run, status, times, GPUs, vCPUs, cost once ended',
    request: { query: ListJobsQuery },
    responses: { 200: json(JobsPage, 'A page; pass `nextCursor` as `cursor` for the next.'), ...READ_ERRORS },
  },
  getComputeUsage: {
    summary: 'GPU-hours, CPU-hours and USD (the cost model’s prices) per category, by run or by day, between two UTC days; with every budget’s spend',
    request: { query: GetComputeUsageQuery },
    responses: {
      200: json(ComputeUsageAnswer, 'Rows per category (and run or day); running jobs count up to now.'),
      ...READ_ERRORS,
      400: errorDoc('Invalid query: `issues` names the field (`from`, `to`: YYYY-MM-DD, from ≤ to, at most 366 days; `groupBy`).'),
    },
  },
  listComputeBudgets: {
    summary: 'Budgets per category (USD per calendar month, UTC) and per run (USD over its life) with their spend',
    responses: { 200: json(z.object({ budgets: z.array(BudgetStatusSchema) }), 'Every budget.'), ...READ_ERRORS },
  },
  putComputeBudget: {
    summary: 'Set a budget for a category or a run; crossing 80% raises a warning notice, 100% an alert, each once per period',
    request: { body: { required: true, content: { 'application/json': { schema: PutComputeBudgetInput } } } },
    responses: {
      200: json(z.object({ budget: ComputeBudgetSchema }), 'Set (a budget set again is replaced).'),
      ...READ_ERRORS,
      400: errorDoc('Invalid budget: `issues` names the field (`category` or `runId`: exactly one; `limitUsd`: a positive number).'),
      403: errorDoc('Not the default tenant, or the key lacks the admin scope.'),
      ...bodyErrors(BUDGET_BODY_LIMIT),
    },
  },
};
