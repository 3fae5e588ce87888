/** OpenAPI descriptions of the sweep routes (merged into `OPERATIONS` of `lib/api/openapi.ts`). */
import { z } from 'zod';
import { bodyErrors, errorDoc, READ_ERRORS, type OperationDoc } from '../../api/operation-docs.ts';
import { SweepIdParams, SweepReportView, SweepStarted, SweepStartInput } from '../schemas.ts';
import { SWEEP_BODY_LIMIT } from './post-sweep.ts';

const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } });

export const SWEEP_OPERATIONS: Record<string, OperationDoc> = {
  postSweep: {
    summary: 'Start (or resume) a sweep of checkpoints × suites × modes',
    request: { body: { required: true, content: { 'application/json': { schema: SweepStartInput } } } },
    responses: {
      202: json(SweepStarted, 'Started; follow it with GET /v1/sweeps/{id}.'),
      ...READ_ERRORS,
      ...bodyErrors(SWEEP_BODY_LIMIT),
    },
  },
  getSweep: {
    summary: "A sweep's report: score per checkpoint × suite × mode with 95% CIs, failed shards, incumbent comparisons, saturation",
    request: { params: SweepIdParams },
    responses: { 200: json(SweepReportView, 'The report.'), 404: errorDoc('No sweep with this id (yet: it appears once validated).'), ...READ_ERRORS },
  },
};
