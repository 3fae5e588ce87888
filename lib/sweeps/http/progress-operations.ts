/** OpenAPI description of `GET /v1/sweeps/{id}/shards` (merged into `OPERATIONS` of `lib/api/openapi.ts`). */
import { errorDoc, READ_ERRORS, type OperationDoc } from '../../api/operation-docs.ts';
import { SweepIdParams } from '../schemas.ts';
import { SweepProgressView } from '../sweep-progress-schema.ts';

export const SWEEP_PROGRESS_OPERATIONS: Record<string, OperationDoc> = {
  getSweepProgress: {
    summary: "Each shard of a sweep: status, attempts done of total, elapsed (what `flywheel sweep status --watch` shows)",
    request: { params: SweepIdParams },
    responses: {
      200: { description: 'The shards, in plan order (none before the sweep is planned).', content: { 'application/json': { schema: SweepProgressView } } },
      404: errorDoc('No sweep with this id.'),
      ...READ_ERRORS,
    },
  },
};
