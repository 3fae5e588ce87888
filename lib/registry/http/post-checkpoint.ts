import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import { principalOfContext } from '../../auth/authorize-request.ts';
import { DEFAULT_TENANT } from '../../auth/scopes.ts';
import type { Ports } from '../../ports/ports.ts';
import { registerCheckpoint } from '../register-checkpoint.ts';

/** Body limit of `POST /v1/checkpoints` (a checkpoint is metadata: weights live in blobs). */
export const CHECKPOINT_BODY_LIMIT = 64 * 1024;

/**
 * `POST /v1/checkpoints`: registers a checkpoint; 201 when created, 200 for an identical retry, 400 naming every
 * offending field (or an id already registered with other fields). Publishes `checkpoint.registered`; the answer
 * names the sweep that starts (`sweeps`), for the default tenant's keys (the only ones sweeps run for).
 */
export function makePostCheckpointHandler(ports: Ports): HttpApiHandler {
  return httpApi(
    async (event) => {
      const tenant = principalOfContext(event.requestContext?.authorizer)?.tenant;
      const result = await registerCheckpoint(ports, event.jsonBody, { sweepsRun: tenant === undefined || tenant === DEFAULT_TENANT });
      return { statusCode: result.created ? 201 : 200, body: result };
    },
    { jsonBodyMaxBytes: CHECKPOINT_BODY_LIMIT },
  );
}
