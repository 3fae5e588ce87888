/** OpenAPI description of `GET /v1/sweeps`, merged into `OPERATIONS` of `lib/api/openapi.ts`. */
import { READ_ERRORS, type OperationDoc } from '../../api/operation-docs.ts';
import { ListSweepsQuery, SweepPageSchema } from '../list-sweeps-schemas.ts';

export const SWEEP_LIST_OPERATIONS: Record<string, OperationDoc> = {
  listSweeps: {
    summary: 'Sweeps newest first, filtered by status (`running`: not finished) and checkpoint',
    request: { query: ListSweepsQuery },
    responses: { 200: { description: 'A page of sweeps.', content: { 'application/json': { schema: SweepPageSchema } } }, ...READ_ERRORS },
  },
};
