import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { listSweeps } from '../list-sweeps.ts';

/**
 * `GET /v1/sweeps?status&checkpoint&limit&cursor`: sweeps, newest first.
 *
 * @example
 * const handler = makeListSweepsHandler(ports); // GET /v1/sweeps?status=running
 */
export function makeListSweepsHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => ({ statusCode: 200, body: await listSweeps(ports.records, event.queryStringParameters ?? {}) }));
}
