import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { getSweepProgress } from '../get-sweep-progress.ts';
import { SweepIdParams } from '../schemas.ts';

/**
 * `GET /v1/sweeps/{id}/shards`: each shard of the sweep with its status, attempts done of total and elapsed time (what
 * `flywheel sweep status --watch` redraws); 404 if the sweep was never started.
 *
 * @example
 * const handler = makeGetSweepProgressHandler(ports); // GET /v1/sweeps/nightly-20261202/shards
 */
export function makeGetSweepProgressHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => {
    const { id } = parseInput(SweepIdParams, event.pathParameters ?? {}, 'path');
    return { statusCode: 200, body: await getSweepProgress(ports, id) };
  });
}
