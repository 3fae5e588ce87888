import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { getCheckpoint } from '../get-checkpoint.ts';
import { CheckpointIdParams } from '../schemas.ts';

/**
 * `GET /v1/checkpoints/{id}`: one registered checkpoint (serving, lineage, status); 404 when it is not registered.
 *
 * @example
 * const handler = makeGetCheckpointHandler(ports); // GET /v1/checkpoints/coder-7b%3Astep-1200
 */
export function makeGetCheckpointHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => {
    const { id } = parseInput(CheckpointIdParams, event.pathParameters ?? {}, 'path');
    return { statusCode: 200, body: await getCheckpoint(ports.records, id) };
  });
}
