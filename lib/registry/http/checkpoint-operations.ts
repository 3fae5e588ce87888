/**
 * OpenAPI description of the registry's checkpoint reads added for the CLI (`flywheel checkpoint show`), merged into
 * `OPERATIONS` of `lib/api/openapi.ts`.
 */
import { errorDoc, READ_ERRORS, type OperationDoc } from '../../api/operation-docs.ts';
import { CheckpointIdParams, CheckpointView } from '../schemas.ts';

export const CHECKPOINT_READ_OPERATIONS: Record<string, OperationDoc> = {
  getCheckpoint: {
    summary: 'One registered checkpoint: model, lineage (parent, training run), serving, status, metadata',
    request: { params: CheckpointIdParams },
    responses: {
      200: { description: 'The checkpoint.', content: { 'application/json': { schema: CheckpointView } } },
      404: errorDoc('No checkpoint with this id.'),
      ...READ_ERRORS,
    },
  },
};
