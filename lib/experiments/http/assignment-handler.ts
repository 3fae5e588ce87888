/**
 * `POST /v1/assignments`: the arm of each unit in each running experiment, answered from memory. The handler is built
 * once per tenant and process (`makeDispatcher` keeps it), and holds that tenant's `AssignmentCache`: a request reads
 * no record unless the copy of the running experiments is stale (older than a few seconds).
 *
 * @example
 * routes.push({ method: 'POST', path: '/v1/assignments', operationId: 'assignUnits', …, make: makeAssignUnitsHandler });
 */
import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { AssignmentCache } from '../assignment/assignment-cache.ts';
import { assignUnits } from '../assignment/assign-units.ts';

/** Bytes of an assignment request: 100 unit ids of up to 256 characters, 50 experiment ids, and the rest. */
export const ASSIGNMENT_BODY_LIMIT = 64 * 1024;

/** The handler, with its own cache of the tenant's running experiments. */
export function makeAssignUnitsHandler(ports: Ports): HttpApiHandler {
  const cache = new AssignmentCache(ports.records);
  return httpApi(async (event) => ({ statusCode: 200, body: await assignUnits(cache, event.jsonBody) }), { jsonBodyMaxBytes: ASSIGNMENT_BODY_LIMIT });
}
