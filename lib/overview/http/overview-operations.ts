/** OpenAPI description of `GET /v1/overview`, merged into `OPERATIONS` of `lib/api/openapi.ts`. */
import { READ_ERRORS, type OperationDoc } from '../../api/operation-docs.ts';
import { LoopOverviewQuery, LoopOverviewSchema } from '../schemas.ts';

export const OVERVIEW_OPERATIONS: Record<string, OperationDoc> = {
  getLoopOverview: {
    summary: "The loop's state: feedback in the last 24 hours and 7 days, failure modes, checkpoints, sweeps, suites, training runs, experiments, open notices",
    request: { query: LoopOverviewQuery },
    responses: { 200: { description: 'The overview.', content: { 'application/json': { schema: LoopOverviewSchema } } }, ...READ_ERRORS },
  },
};
