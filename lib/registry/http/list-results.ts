import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { listResults } from '../list-results.ts';

/** `GET /v1/results?suite=&checkpoint=&mode=&sweep=&limit=`: result rows, oldest first (the time series). */
export function makeListResultsHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => ({ statusCode: 200, body: await listResults(ports, event.queryStringParameters ?? {}) }));
}
