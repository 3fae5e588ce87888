import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { registerCheckpoint } from '../register-checkpoint.ts';

/** Body limit of `POST /v1/checkpoints` (a checkpoint is metadata: weights live in blobs). */
export const CHECKPOINT_BODY_LIMIT = 64 * 1024;

/**
 * `POST /v1/checkpoints`: registers a checkpoint; 201 when created, 200 for an identical retry, 400 naming every
 * offending field (or an id already registered with other fields). Publishes `checkpoint.registered`.
 */
export function makePostCheckpointHandler(ports: Ports): HttpApiHandler {
  return httpApi(
    async (event) => {
      const result = await registerCheckpoint(ports, event.jsonBody);
      return { statusCode: result.created ? 201 : 200, body: result };
    },
    { jsonBodyMaxBytes: CHECKPOINT_BODY_LIMIT },
  );
}
