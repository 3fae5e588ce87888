import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { getAttempt } from '../get-attempt.ts';
import { listAttempts } from '../list-attempts.ts';

/**
 * `GET /v1/attempts?sweep&checkpoint&suite&task&mode&outcome&limit&cursor`: attempts, newest sweep first, a page at a time.
 *
 * @example
 * const handler = makeListAttemptsHandler(ports); // GET /v1/attempts?checkpoint=coder-7b%3Astep-100&outcome=failed
 */
export function makeListAttemptsHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => ({ statusCode: 200, body: await listAttempts(ports, event.queryStringParameters ?? {}) }));
}

/**
 * `GET /v1/attempts/{id}?stepOffset&stepLimit`: one attempt for the viewer; 404 naming the id.
 *
 * @example
 * const handler = makeGetAttemptHandler(ports); // GET /v1/attempts/WyJzd2VlcC5…
 */
export function makeGetAttemptHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => ({ statusCode: 200, body: await getAttempt(ports, event.pathParameters ?? {}, event.queryStringParameters ?? {}) }));
}
